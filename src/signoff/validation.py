"""Checking arguments and answers against JSON Schemas (jsonschema), with readable errors."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import jsonschema
from jsonschema.protocols import Validator

from ._util import canonical_json
from .errors import ConfigError, InvalidArguments


def check_schema(schema: dict[str, Any]) -> None:
    """Raise ConfigError if `schema` is not a valid JSON Schema."""
    try:
        validator_for(canonical_json(schema))
    except jsonschema.SchemaError as exc:
        raise ConfigError(f"invalid JSON Schema: {exc.message}") from None


@lru_cache(maxsize=512)
def validator_for(schema_text: str) -> Validator:
    schema = json.loads(schema_text)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator: Validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    return validator


def schema_problems(schema: dict[str, Any] | None, value: Any) -> list[str]:
    """Every way `value` breaks `schema`, as `path: message` lines (empty when it fits)."""
    if not schema:
        return []
    validator = validator_for(canonical_json(schema))
    problems = []
    for error in sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(part) for part in error.absolute_path) or "(root)"
        problems.append(f"{where}: {error.message}")
    return problems


def validate_args(schema: dict[str, Any] | None, args: Any, *, what: str = "arguments") -> None:
    if not isinstance(args, dict) and what == "arguments":
        raise InvalidArguments(f"{what} must be a JSON object, got {type(args).__name__}")
    problems = schema_problems(schema, args)
    if problems:
        raise InvalidArguments(f"the {what} do not match the schema: " + "; ".join(problems))
