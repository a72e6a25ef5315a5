"""Form fields built from a JSON Schema, and the value read back from a submitted form.

string → text input (a textarea for long or multi-line text), number/integer → number input,
boolean → checkbox, enum → select, anything else (objects, arrays, unions) → a JSON textarea.
An object schema with `properties` gives one field per property; any other schema gives one
field for the whole value. Values the schema does not describe keep a JSON field of their own,
so an edit never drops an argument silently.

Checking the value against the schema is not done here: the store does it when deciding, and
its message is shown next to the form.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

FieldKind = Literal["text", "textarea", "number", "integer", "checkbox", "select", "json"]
LONG_TEXT = 80
MISSING: Any = object()


@dataclass(frozen=True, kw_only=True)
class FormField:
    name: str
    """The HTML form field's name."""
    key: str | None
    """The property this field fills; None when it is the whole value."""
    label: str
    kind: FieldKind
    raw: str = ""
    """The text the input shows."""
    checked: bool = False
    options: tuple[tuple[str, str], ...] = ()
    """(value, label) pairs of a select; values are JSON."""
    required: bool = False
    nullable: bool = False
    hint: str | None = None
    hidden_value: bool = False
    """The value is redacted: the input starts empty, and left empty it keeps the original."""

    @property
    def input_type(self) -> str:
        return "number" if self.kind in ("number", "integer") else "text"

    @property
    def step(self) -> str:
        return "1" if self.kind == "integer" else "any"


def fields_for(
    schema: Mapping[str, Any] | None,
    value: Any,
    *,
    prefix: str,
    whole_label: str,
    redact: tuple[str, ...] = (),
) -> list[FormField]:
    """The fields that edit `value` under `schema` (form names start with `prefix`)."""
    if _has_properties(schema) and (value is MISSING or isinstance(value, dict)):
        assert schema is not None
        current: dict[str, Any] = value if isinstance(value, dict) else {}
        properties: Mapping[str, Any] = schema["properties"]
        required = set(schema.get("required") or ())
        fields = [
            _field(
                f"{prefix}.{key}",
                key,
                sub if isinstance(sub, Mapping) else {},
                current.get(key, MISSING),
                required=key in required,
                hidden=key in redact,
            )
            for key, sub in properties.items()
        ]
        fields.extend(
            _field(f"{prefix}.{key}", key, {}, extra, required=False, hidden=key in redact)
            for key, extra in current.items()
            if key not in properties
        )
        return fields
    whole = _field(prefix, None, schema or {}, value, required=True, hidden=False)
    return [replace(whole, label=whole_label)]


def with_submitted(fields: list[FormField], form: Mapping[str, str]) -> list[FormField]:
    """The same fields showing what was typed (to show a form again next to its error)."""
    shown = []
    for field in fields:
        if field.kind == "checkbox":
            shown.append(replace(field, checked=field.name in form))
        else:
            shown.append(replace(field, raw=form.get(field.name, "")))
    return shown


def read_fields(
    fields: list[FormField], form: Mapping[str, str], *, original: Any = MISSING
) -> tuple[Any, list[str]]:
    """The value the submitted form describes, and what could not be read (bad JSON)."""
    problems: list[str] = []
    if len(fields) == 1 and fields[0].key is None:
        return _read(fields[0], form, original, problems), problems
    before: dict[str, Any] = original if isinstance(original, dict) else {}
    value: dict[str, Any] = {}
    for field in fields:
        assert field.key is not None
        read = _read(field, form, before.get(field.key, MISSING), problems)
        if read is not MISSING:
            value[field.key] = read
    return value, problems


def _has_properties(schema: Mapping[str, Any] | None) -> bool:
    return (
        schema is not None
        and isinstance(schema.get("properties"), Mapping)
        and bool(schema["properties"])
        and schema.get("type", "object") == "object"
    )


def _kind_of(schema: Mapping[str, Any], value: Any) -> tuple[FieldKind, bool]:
    """The input kind for `schema`, and whether null is allowed."""
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return "select", None in schema["enum"]
    declared = schema.get("type")
    types = declared if isinstance(declared, list) else [declared] if declared else []
    nullable = "null" in types
    kinds = [kind for kind in types if kind != "null"]
    if len(kinds) != 1:
        return "json", nullable
    kind = kinds[0]
    if kind == "string":
        long = isinstance(value, str) and ("\n" in value or len(value) > LONG_TEXT)
        return ("textarea" if long or schema.get("format") == "textarea" else "text"), nullable
    if kind in ("number", "integer"):
        return kind, nullable
    if kind == "boolean":
        return "checkbox", nullable
    return "json", nullable


def _field(
    name: str, key: str | None, schema: Mapping[str, Any], value: Any, *, required: bool, hidden: bool
) -> FormField:
    kind, nullable = _kind_of(schema, value)
    hint = schema.get("description") if isinstance(schema.get("description"), str) else None
    label = str(schema.get("title") or key or "value")
    field = FormField(
        name=name, key=key, label=label, kind=kind, required=required, nullable=nullable, hint=hint
    )
    if hidden:
        return replace(field, kind="json" if kind == "checkbox" else kind, hidden_value=True)
    if kind == "select":
        options = tuple((_json(option), _option_label(option)) for option in schema["enum"])
        raw = _json(value) if value is not MISSING and value in schema["enum"] else ""
        return replace(field, options=options, raw=raw)
    if kind == "checkbox":
        return replace(field, checked=value is True)
    return replace(field, raw=_raw(kind, value))


def _raw(kind: FieldKind, value: Any) -> str:
    if value is MISSING or value is None:
        return ""
    if kind in ("text", "textarea"):
        return value if isinstance(value, str) else _json(value)
    if kind in ("number", "integer"):
        return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else _json(value)
    return json.dumps(value, indent=2, ensure_ascii=False)


def _read(field: FormField, form: Mapping[str, str], original: Any, problems: list[str]) -> Any:
    if field.kind == "checkbox":
        return field.name in form
    text = form.get(field.name, "")
    if field.hidden_value and text == "":
        return original
    if field.kind in ("text", "textarea"):
        if text == "" and not field.required:
            if original is MISSING:
                return MISSING
            if original is None:
                return None
        return text
    if text.strip() == "":
        if field.nullable and original is None:
            return None
        return MISSING if field.key is not None else None
    if field.kind == "select":
        return _json_value(field, text, problems)
    if field.kind in ("number", "integer"):
        return _number(text.strip())
    return _json_value(field, text, problems)


def _number(text: str) -> Any:
    """An int or a float; text that is neither is passed on as text, for the schema to refuse."""
    for parse in (int, float):
        try:
            return parse(text)
        except ValueError:
            continue
    return text


def _json_value(field: FormField, text: str, problems: list[str]) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(f"{field.label}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})")
        return MISSING


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _option_label(option: Any) -> str:
    return option if isinstance(option, str) else _json(option)
