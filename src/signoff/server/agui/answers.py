"""The answers an AG-UI run carries, read into signoff decisions before anything is decided.

Two ways back, one meaning:

- `resume` entries (AG-UI 1.0, `useInterrupt`): `{interruptId, status, payload}`. `resolved`
  answers; `cancelled` answers nothing (the client dropped the interrupt, as it must for an
  expired one), and the request stays as it is.
- `role: "tool"` messages for signoff's toolCallIds (CopilotKit's `useHumanInTheLoop`
  `respond()`). The history a client sends back holds old ones too: a tool call that already
  has signoff's TOOL_CALL_RESULT in the history was answered before and is left alone.

Each answer is one of: `"approved"` / `"denied"` (and `approve`, `deny`, `reject`, `rejected`),
`true` / `false`, `{"approved": bool, "editedArgs": {...}, "reason": "..."}`, or signoff's own
decision object (`{"type": "edit", "args": {...}}`, `{"type": "respond", "message": "..."}`, …).
An input request (`gate.ask(question, schema=...)`) also takes its answer as a plain object
(CopilotKit's `respond({taskId, priority})`): an object with neither `"type"` nor `"approved"` is
the answer itself, checked against the request's schema. To a tool call's approval such an object
means nothing (approve? with these args?), so it is refused, saying what a tool call takes.
A tool message's text is read as JSON when it is JSON, else as the string it is. Anything else
is malformed: `parse_answers` raises InvalidDecision (for a plain object given to a tool call,
`payload_for` does, once its request is known), and the run decides nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

import pydantic_core
from ag_ui.core import AssistantMessage, RunAgentInput, ToolCall, ToolMessage

from ...decisions import parse_decision
from ...errors import InvalidDecision, InvalidInput
from ...jsonvalues import check as check_json
from ...requests import Request
from .ids import CallRef, is_result_message, parse_tool_call_id

APPROVE_WORDS = frozenset({"approved", "approve"})
REJECT_WORDS = frozenset({"denied", "deny", "rejected", "reject"})
APPROVED_KEYS = frozenset({"approved", "editedArgs", "edited_args", "reason"})
ACCEPTED = (
    '"approved" or "denied", true or false, {"approved": bool, "editedArgs": {...}, "reason": "..."}, '
    'or a signoff decision ({"type": "approve" | "edit" | "reject" | "respond", ...})'
)

Source = Literal["resume", "tool message"]


@dataclass(frozen=True)
class Answer:
    """One answer to one of signoff's tool calls. `payload` is signoff's decision object, or
    None for a `cancelled` resume entry (nothing to decide) and for a plain object that is no
    decision (`plain`: see `payload_for`)."""

    tool_call_id: str
    call: CallRef
    payload: dict[str, Any] | None
    source: Source
    where: str
    """How the error messages name it: `resume entry for call_1~req_…`."""
    plain: dict[str, Any] | None = None
    """The answer, when it is an object without `"type"`: an input request's answer."""

    @property
    def answers(self) -> bool:
        """Whether it says anything (a `cancelled` entry does not)."""
        return self.payload is not None or self.plain is not None


def payload_for(answer: Answer, request: Request) -> dict[str, Any] | None:
    """`answer`'s decision object for `request`: a plain object answers an input request (as
    `{"type": "respond", "value": ...}`, checked against its schema when decided); to a tool
    call it is refused. None: a cancelled entry, nothing to decide."""
    if answer.payload is not None:
        return answer.payload
    if answer.plain is None:
        return None
    if request.kind == "input":
        return {"type": "respond", "value": answer.plain}
    raise InvalidDecision(
        f"{answer.where}: an object without 'type' or 'approved' answers only a question (an input "
        f"request, gate.ask); request {request.id} is a tool call: send {ACCEPTED}"
    )


def parse_answers(run: RunAgentInput) -> list[Answer]:
    """Every answer in the run, in the order sent; InvalidDecision for the first malformed one."""
    answers: dict[str, Answer] = {}
    for answer in [*_resume_answers(run), *_tool_message_answers(run)]:
        request_id = answer.call.request_id
        before = answers.get(request_id)
        if before is not None and before.answers and answer.answers:
            raise InvalidDecision(
                f"{answer.where}: request {request_id} is answered twice in one run "
                f"(also by the {before.where}); send one answer per tool call"
            )
        if before is None or not before.answers:
            answers[request_id] = answer
    return list(answers.values())


def _resume_answers(run: RunAgentInput) -> Iterable[Answer]:
    for entry in run.resume or ():
        where = f"resume entry for {entry.interrupt_id!r}"
        call = _call_or_refuse(entry.interrupt_id, where, what="interrupt")
        if entry.status == "cancelled":
            yield Answer(entry.interrupt_id, call, None, "resume", where)
            continue
        payload, plain = read_answer(entry.payload, where)
        yield Answer(entry.interrupt_id, call, payload, "resume", where, plain)


def tool_messages(run: RunAgentInput) -> list[ToolMessage]:
    return [message for message in run.messages if isinstance(message, ToolMessage)]


def history_calls(run: RunAgentInput) -> list[ToolCall]:
    """Every tool call the client's history holds."""
    return [
        call
        for message in run.messages
        if isinstance(message, AssistantMessage)
        for call in message.tool_calls or ()
    ]


def with_result(run: RunAgentInput) -> set[str]:
    """The toolCallIds that signoff's TOOL_CALL_RESULT answered in the client's history."""
    return {message.tool_call_id for message in tool_messages(run) if is_result_message(message.id)}


def _tool_message_answers(run: RunAgentInput) -> Iterable[Answer]:
    answered = with_result(run)
    for message in tool_messages(run):
        if is_result_message(message.id) or message.tool_call_id in answered:
            continue
        call = parse_tool_call_id(message.tool_call_id)
        if call is None:  # another tool of the page's: not ours to read
            continue
        where = f"tool message {message.id!r} for {message.tool_call_id!r}"
        payload, plain = read_answer(_content_value(message.content), where)
        yield Answer(message.tool_call_id, call, payload, "tool message", where, plain)


def _call_or_refuse(value: str, where: str, *, what: str) -> CallRef:
    call = parse_tool_call_id(value)
    if call is None:
        raise InvalidDecision(f"{where}: {what} {value!r} is not one of signoff's (they end in ~req_…)")
    return call


def _content_value(content: Any) -> Any:
    """A tool message's answer: its text (parts joined), read as JSON when it is JSON."""
    if isinstance(content, list):
        text = "".join(str(getattr(part, "text", "")) for part in content)
    else:
        text = str(content)
    try:
        return pydantic_core.from_json(text)
    except ValueError:
        return text


def read_answer(value: Any, where: str) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(decision object, None), or (None, the plain object) for an object with neither `"type"`
    nor `"approved"` (an input request's answer: see `payload_for`)."""
    if isinstance(value, dict) and "type" not in value and "approved" not in value:
        try:
            check_json(value, "answer")
        except InvalidInput as exc:
            raise InvalidDecision(f"{where}: {exc.message}") from None
        return None, value
    return decision_payload(value, where), None


def decision_payload(value: Any, where: str) -> dict[str, Any]:
    """An answer as signoff's decision object, checked as far as it can be without the request;
    InvalidDecision naming `where` and what is accepted, if it is none of the accepted shapes."""
    try:
        check_json(value, "answer")
    except InvalidInput as exc:
        raise InvalidDecision(f"{where}: {exc.message}") from None
    payload = _payload_of(value, where)
    try:
        parse_decision(payload)
    except InvalidDecision as exc:
        raise InvalidDecision(f"{where}: {exc.message}") from None
    return payload


def _payload_of(value: Any, where: str) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"type": "approve"} if value else {"type": "reject"}
    if isinstance(value, str):
        word = value.strip().lower()
        if word in APPROVE_WORDS:
            return {"type": "approve"}
        if word in REJECT_WORDS:
            return {"type": "reject"}
        raise InvalidDecision(f"{where}: {value[:80]!r} is not an answer; send {ACCEPTED}")
    if isinstance(value, dict):
        if "type" in value:
            return dict(value)
        if "approved" in value:
            return _approved_form(value, where)
    shown = type(value).__name__ if not isinstance(value, dict) else "an object without 'approved' or 'type'"
    raise InvalidDecision(f"{where}: {shown} is not an answer; send {ACCEPTED}")


def _approved_form(value: dict[str, Any], where: str) -> dict[str, Any]:
    unknown = sorted(set(value) - APPROVED_KEYS)
    if unknown:
        raise InvalidDecision(f"{where}: unknown key(s) {', '.join(unknown)}; send {ACCEPTED}")
    approved = value["approved"]
    if not isinstance(approved, bool):
        raise InvalidDecision(f"{where}: 'approved' must be true or false")
    reason = value.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise InvalidDecision(f"{where}: 'reason' must be a string")
    if "editedArgs" in value and "edited_args" in value:
        raise InvalidDecision(f"{where}: give the edited args once, in 'editedArgs'")
    edited = value.get("editedArgs", value.get("edited_args"))
    if edited is not None and not isinstance(edited, dict):
        raise InvalidDecision(f"{where}: 'editedArgs' must be an object of the tool's arguments")
    if not approved:
        if edited is not None:
            raise InvalidDecision(f"{where}: a denied call has no edited args")
        return {"type": "reject", **({"message": reason} if reason else {})}
    comment = {"comment": reason} if reason else {}
    if edited is not None:
        return {"type": "edit", "args": edited, **comment}
    return {"type": "approve", **comment}
