"""What a card's forms send, turned into the decision payload `decide_as` takes.

Every form posts `type` (approve, edit, reject, respond) and the fields of that decision:
`comment` (and, with an approval, `grant_minutes`: a standing grant for calls like it);
`message`; the edit fields (`arg.NAME`, or `arg` for the whole object as JSON);
the answer fields (`answer.NAME`, or `answer`). Redacted arguments are never sent to the
browser: their edit inputs start empty, and left empty (or left as `***` in the JSON editor)
they keep the original value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InvalidInput
from ..requests import Request
from ..templates import REDACTED
from .form_fields import MISSING, FieldProblems, FormField, field_problems, fields_for, read_fields

DECISION_ORDER = ("approve", "edit", "respond", "reject")
EDIT_PREFIX = "arg"
ANSWER_PREFIX = "answer"


class FormProblem(InvalidInput):
    """The form could not be read, or a field breaks the schema: `fields` says which (form name →
    what is wrong), to show next to each field."""

    def __init__(self, message: str, *, fields: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.fields = dict(fields or {})


def form_values(form: Mapping[str, Any]) -> dict[str, str]:
    """The submitted text fields; line breaks as `\\n` (browsers send a textarea's as CRLF)."""
    return {key: value.replace("\r\n", "\n") for key, value in form.items() if isinstance(value, str)}


def edit_fields(request: Request) -> list[FormField]:
    return fields_for(
        request.args_schema,
        request.shown_args(),
        prefix=EDIT_PREFIX,
        whole_label="Arguments (JSON)",
        redact=request.rule.redact,
    )


def answer_fields(request: Request) -> list[FormField] | None:
    """The answer's fields when the request has an answer schema; else the answer is a message."""
    if request.answer_schema is None:
        return None
    return fields_for(request.answer_schema, MISSING, prefix=ANSWER_PREFIX, whole_label="Answer")


def decision_payload(request: Request, form: Mapping[str, str]) -> dict[str, Any]:
    """The decision the form describes. Raises FormProblem when it cannot be read."""
    kind = form.get("type", "")
    if kind == "approve":
        payload = _without_empty({"type": "approve", "comment": form.get("comment")})
        minutes = (form.get("grant_minutes") or "").strip()
        if minutes:
            if not minutes.isdigit():
                raise FormProblem(f"grant_minutes must be a whole number of minutes, not {minutes!r}")
            payload["grant"] = {"minutes": int(minutes)}
        return payload
    if kind == "reject":
        return _without_empty({"type": "reject", "message": form.get("message")})
    if kind == "edit":
        return _without_empty(
            {"type": "edit", "args": _edited_args(request, form), "comment": form.get("comment")}
        )
    if kind == "respond":
        return _response(request, form)
    raise FormProblem(f"unknown decision {kind!r}; use approve, edit, reject or respond")


def _edited_args(request: Request, form: Mapping[str, str]) -> dict[str, Any]:
    fields = edit_fields(request)
    args, problems = read_fields(fields, form, original=request.args)
    _refuse(problems)
    if not isinstance(args, dict):
        problem = "The arguments must be a JSON object"
        raise FormProblem(problem, fields={fields[0].name: problem})
    for key in request.rule.redact:
        if args.get(key) == REDACTED and key in request.args:
            args[key] = request.args[key]
    _refuse(field_problems(fields, request.args_schema, args))
    return args


def _refuse(problems: FieldProblems) -> None:
    if problems:
        raise FormProblem(problems.summary, fields=problems)


def _response(request: Request, form: Mapping[str, str]) -> dict[str, Any]:
    fields = answer_fields(request)
    if fields is None:
        message = (form.get("message") or "").strip()
        if not message:
            raise FormProblem("write a response first")
        return {"type": "respond", "message": message}
    value, problems = read_fields(fields, form)
    _refuse(problems)
    if value is None or value is MISSING:
        raise FormProblem("give an answer first")
    _refuse(field_problems(fields, request.answer_schema, value))
    return {"type": "respond", "value": value}


def _without_empty(payload: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in payload.items() if value not in (None, "")}
