"""A line a person can act on, made from a call when nothing else describes it:
`send_email to all-staff@example.com subject 'Q3 numbers' (+2 more)`.

A request's `description` is what its rule's template (or a framework's own words) wrote, and the
framework adapters hand it to the model and to their UIs exactly as the framework would; with the
default template it says only "Tool execution requires approval". People's cards (the inbox, the
request page, chat cards, mail) show this summary in its place, made when they are rendered from
the redacted arguments and the tool's JSON Schema: the required arguments first, then the others
in the schema's order, leaving out empty ones and those equal to their default; each value on one
line, cut short, its hidden characters escaped (`signoff.visible`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._util import cut
from .templates import REDACTED
from .visible import visible, visible_json

SUMMARY_ARGS = 4
"""At most this many arguments are named; the rest are counted."""
VALUE_CHARS = 48
"""The longest value shown, in characters."""
SUMMARY_CHARS = 160
"""No argument is added once the line is this long."""
UNQUOTED_FORMATS = frozenset(
    {"email", "idn-email", "uri", "iri", "uri-reference", "hostname", "date", "date-time"}
)
"""String formats shown bare, as addresses and dates read."""


def call_summary(tool_name: str, args: Mapping[str, Any], schema: Mapping[str, Any] | None = None) -> str:
    """One line saying what the call does: the tool's name, then its arguments as `name value`.
    `args` are shown as they are given: pass them redacted (`Request.shown_args`)."""
    properties = _properties(schema)
    parts = [visible(tool_name)]
    left_out = 0
    for name in _ordered(args, schema):
        value = args[name]
        spec = properties.get(name, {})
        if _says_nothing(value, spec):
            continue
        if len(parts) > SUMMARY_ARGS or sum(len(part) + 1 for part in parts) > SUMMARY_CHARS:
            left_out += 1
            continue
        parts.append(f"{visible(name)} {_value(value, spec)}")
    if left_out:
        parts.append(f"(+{left_out} more)")
    return " ".join(parts)


def _properties(schema: Mapping[str, Any] | None) -> Mapping[str, Mapping[str, Any]]:
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping):
        return {}
    return {name: spec for name, spec in properties.items() if isinstance(spec, Mapping)}


def _ordered(args: Mapping[str, Any], schema: Mapping[str, Any] | None) -> list[str]:
    """The required arguments in the order the schema lists them, then its others in its order,
    then any it does not name."""
    required = schema.get("required") if isinstance(schema, Mapping) else None
    first = [name for name in required if isinstance(name, str)] if isinstance(required, list) else []
    order = dict.fromkeys([*first, *_properties(schema), *args])
    return [name for name in order if name in args]


def _says_nothing(value: Any, spec: Mapping[str, Any]) -> bool:
    if value is None or value == "" or value == [] or value == {}:
        return True
    return "default" in spec and spec["default"] == value and type(spec["default"]) is type(value)


def _value(value: Any, spec: Mapping[str, Any]) -> str:
    if isinstance(value, str):
        text = cut(visible(value), VALUE_CHARS)
        return text if value == REDACTED or _bare(value, spec) else f"'{text}'"
    if isinstance(value, list) and all(isinstance(item, str | int | float | bool) for item in value):
        items = ", ".join(item if isinstance(item, str) else visible_json(item) for item in value)
        return cut(visible(items), VALUE_CHARS)
    return cut(visible_json(value), VALUE_CHARS)


def _bare(value: str, spec: Mapping[str, Any]) -> bool:
    """An address, a path or one of the schema's choices reads without quotes; words do not."""
    if any(char.isspace() for char in value):
        return False
    if spec.get("format") in UNQUOTED_FORMATS or "enum" in spec:
        return True
    return "@" in value or "://" in value or value.startswith(("/", "~/"))
