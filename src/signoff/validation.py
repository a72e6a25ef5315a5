"""Checking arguments and answers against JSON Schemas (jsonschema), with readable errors."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ._util import canonical_json
from .errors import ConfigError, InvalidArguments

if TYPE_CHECKING:
    from jsonschema.protocols import Validator


def check_schema(schema: dict[str, Any]) -> None:
    """Raise ConfigError if `schema` is not a valid JSON Schema."""
    import jsonschema

    try:
        validator_for(canonical_json(schema))
    except jsonschema.SchemaError as exc:
        raise ConfigError(f"invalid JSON Schema: {exc.message}") from None


@lru_cache(maxsize=512)
def validator_for(schema_text: str) -> Validator:
    import jsonschema  # only where a schema is checked: most commands never do

    schema = json.loads(schema_text)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator: Validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    return validator


@dataclass(frozen=True, kw_only=True)
class SchemaProblem:
    """One way a value breaks its schema, in plain words."""

    path: tuple[str | int, ...]
    """Where in the value; for a missing property, the property's own place."""
    message: str
    missing: bool = False
    """A required property is absent (`message` is then "is required")."""

    @property
    def where(self) -> str:
        return "/".join(str(part) for part in self.path) or "(root)"

    @property
    def text(self) -> str:
        """'to is required', 'amount: 500 is greater than the maximum of 100'."""
        return f"{self.where} {self.message}" if self.missing else f"{self.where}: {self.message}"


def schema_errors(schema: dict[str, Any] | None, value: Any) -> list[SchemaProblem]:
    """Every way `value` breaks `schema`, in the order of the value's paths (empty when it fits)."""
    if not schema:
        return []
    validator = validator_for(canonical_json(schema))
    problems: list[SchemaProblem] = []
    for error in sorted(validator.iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path]):
        path = tuple(error.absolute_path)
        if error.validator == "required" and isinstance(error.instance, dict):
            # jsonschema words it "'to' is a required property", one error per missing name
            required: list[str] = error.validator_value  # type: ignore[assignment]
            for name in required:
                problem = SchemaProblem(path=(*path, name), message="is required", missing=True)
                if name not in error.instance and problem not in problems:
                    problems.append(problem)
            continue
        problems.append(SchemaProblem(path=path, message=error.message))
    return problems


def schema_problems(schema: dict[str, Any] | None, value: Any) -> list[str]:
    """Every way `value` breaks `schema`, as lines: `to is required`, `amount: 500 is greater …`."""
    return [problem.text for problem in schema_errors(schema, value)]


def validate_args(schema: dict[str, Any] | None, args: Any, *, what: str = "arguments") -> None:
    if not isinstance(args, dict) and what == "arguments":
        raise InvalidArguments(f"{what} must be a JSON object, got {type(args).__name__}")
    problems = schema_problems(schema, args)
    if problems:
        verb = "do" if what == "arguments" else "does"  # "the answer does not match"
        raise InvalidArguments(f"the {what} {verb} not match the schema: " + "; ".join(problems))
