"""Turning command-line text into values: JSON, `key=value` edits, comma lists."""

from __future__ import annotations

import json
from typing import Any

from .state import CliInputError


def parse_json(text: str, *, option: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliInputError(f"{option} is not valid JSON ({exc.msg} at position {exc.pos}): {text}") from None


def parse_json_object(text: str, *, option: str) -> dict[str, Any]:
    value = parse_json(text, option=option)
    if not isinstance(value, dict):
        raise CliInputError(f"{option} must be a JSON object, got {type(value).__name__}: {text}")
    return value


def apply_sets(
    args: dict[str, Any], assignments: list[str], schema: dict[str, Any] | None = None
) -> dict[str, Any]:
    """`args` with each `key=value` applied. A string argument takes the value as typed;
    any other (or a new argument whose schema type is not string) takes it as JSON."""
    result = dict(args)
    for assignment in assignments:
        key, sep, raw = assignment.partition("=")
        key = key.strip()
        if not sep or not key:
            raise CliInputError(f"--set expects key=value, got {assignment!r}")
        if _is_string_arg(key, args, schema):
            result[key] = raw
            continue
        try:
            result[key] = json.loads(raw)
        except json.JSONDecodeError:
            kind = _json_type(args[key]) if key in args else "not a string"
            raise CliInputError(
                f"--set {key}={raw}: {raw!r} is not valid JSON, and {key!r} is {kind} "
                f"(only string arguments take their value as typed)"
            ) from None
    return result


def _is_string_arg(key: str, args: dict[str, Any], schema: dict[str, Any] | None) -> bool:
    if key in args:
        return isinstance(args[key], str)
    properties = (schema or {}).get("properties") or {}
    spec = properties.get(key)
    return isinstance(spec, dict) and spec.get("type") == "string"


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "null" if value is None else "not a string"


def split_list(text: str) -> list[str]:
    """`"a, b,c"` → `["a", "b", "c"]`; an empty text gives an empty list."""
    return [item.strip() for item in text.split(",") if item.strip()]
