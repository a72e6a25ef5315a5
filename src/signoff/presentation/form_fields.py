"""Form fields built from a JSON Schema, and the value read back from a submitted form.

string → text input (a textarea for long or multi-line text), number/integer → number input,
boolean → checkbox, enum → select, anything else (objects, arrays, unions) → a JSON textarea.
An object schema with `properties` gives one field per property; any other schema gives one
field for the whole value. Values the schema does not describe keep a JSON field of their own,
so an edit never drops an argument silently.

A blank required field is a problem of its own ("To is required"), never sent as "". What the
inputs show is written with hidden characters as escapes (see `signoff.visible`); a field sent
back as it was shown keeps its original value. `field_problems` checks a read value against the
schema and says which field each problem belongs to, so the form shows it next to that field
(the store checks again when deciding).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from ..validation import schema_errors
from ..visible import hidden_in, visible, visible_json

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
    shown: str = ""
    """What the input showed at first; sent back unchanged, the field keeps its original value."""
    hidden: tuple[str, ...] = ()
    """Characters a person cannot see in the current value (shown as escapes)."""
    error: str | None = None
    """What is wrong with what was sent, shown next to the field."""

    @property
    def id(self) -> str:
        """A base for the ids of the field's hint and error (form names may hold any character)."""
        return "f-" + "".join(char if char.isalnum() else "-" for char in self.name)

    @property
    def named(self) -> str:
        """The label as a message starts with it: 'To', 'Arguments (JSON)'."""
        return self.label[:1].upper() + self.label[1:]

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


def with_errors(fields: list[FormField], errors: Mapping[str, str]) -> list[FormField]:
    """The same fields, each with its problem (by form name) to show next to it."""
    return [replace(field, error=errors[field.name]) if field.name in errors else field for field in fields]


class FieldProblems(dict[str, str]):
    """Form name → what is wrong with that field ("To is required"), in the fields' order."""

    def add(self, field: FormField, message: str) -> None:
        self.setdefault(field.name, message)

    @property
    def summary(self) -> str:
        return "; ".join(self.values())


def read_fields(
    fields: list[FormField], form: Mapping[str, str], *, original: Any = MISSING
) -> tuple[Any, FieldProblems]:
    """The value the submitted form describes, and what could not be read (bad JSON, a blank
    required field), by field."""
    problems = FieldProblems()
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


def field_problems(fields: list[FormField], schema: Mapping[str, Any] | None, value: Any) -> FieldProblems:
    """How `value` breaks `schema`, each problem on the field it belongs to (or on the only field,
    when one field holds the whole value)."""
    problems = FieldProblems()
    by_key = {field.key: field for field in fields if field.key is not None}
    whole = fields[0] if len(fields) == 1 and fields[0].key is None else None
    for problem in schema_errors(dict(schema) if schema else None, value):
        field = by_key.get(str(problem.path[0])) if problem.path and whole is None else whole
        if field is None:
            continue
        inner = problem.path[1:] if whole is None else problem.path
        where = "/".join(str(part) for part in inner)
        if problem.missing and whole is None:
            message = f"{field.named}: {where} is required" if where else f"{field.named} is required"
        elif problem.missing:
            message = f"{_name(where)} is required"
        else:
            message = f"{field.named}: {where + ': ' if where else ''}{problem.message}"
        problems.add(field, message)
    return problems


def _name(key: str | int) -> str:
    text = str(key)
    return text[:1].upper() + text[1:]


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
    unseen = tuple(hidden_in(value, newlines=kind != "text")) if value is not MISSING else ()
    if kind == "select":
        options = tuple((_json(option), _option_label(option)) for option in schema["enum"])
        raw = _json(value) if value is not MISSING and value in schema["enum"] else ""
        return replace(field, options=options, raw=raw, shown=raw, hidden=unseen)
    if kind == "checkbox":
        return replace(field, checked=value is True)
    raw = _raw(kind, value)
    return replace(field, raw=raw, shown=raw, hidden=unseen)


def _raw(kind: FieldKind, value: Any) -> str:
    """What the input shows for `value`: hidden characters as escapes (JSON escapes in JSON, so
    that the text parses back to the same value)."""
    if value is MISSING or value is None:
        return ""
    if kind == "text":
        return visible(value) if isinstance(value, str) else visible_json(value)
    if kind == "textarea":
        return visible(value, newlines=True) if isinstance(value, str) else visible_json(value)
    if kind in ("number", "integer"):
        return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else _json(value)
    return visible_json(value, indent=2)


def _read(field: FormField, form: Mapping[str, str], original: Any, problems: FieldProblems) -> Any:
    if field.kind == "checkbox":
        return field.name in form
    text = form.get(field.name, "")
    if field.hidden_value and text == "":
        return original
    if original is not MISSING and text == field.shown and field.shown:
        return original  # sent back as shown: unchanged (its hidden characters were shown escaped)
    if text.strip() == "" and field.required:
        problems.add(field, f"{field.named} is required")
        return MISSING
    if field.kind in ("text", "textarea"):
        if text == "":
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


def _json_value(field: FormField, text: str, problems: FieldProblems) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        problems.add(
            field, f"{field.named}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        )
        return MISSING


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _option_label(option: Any) -> str:
    return option if isinstance(option, str) else _json(option)
