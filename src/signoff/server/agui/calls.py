"""One signoff request as AG-UI shows it: a tool call, an interrupt, a result.

The tool call is named after the real tool (a `useHumanInTheLoop` renderer named `"*"` renders
them all) and carries the args people may see (redacted as the inbox shows them). Who asks
travels in `metadata.signoff` (agent, app, thread, requester, request id, deadline), on the
tool call and on its interrupt; the calls of one agent's thread share a parent message.
"""

from __future__ import annotations

import json
from typing import Any

from ag_ui.core import Interrupt, ToolCallArgsEvent, ToolCallEndEvent, ToolCallResultEvent, ToolCallStartEvent

from ..._util import format_moment
from ...decision_checks import SEPARATED_DECISIONS
from ...requests import Request, RequestStatus
from .ids import parent_message_id, result_message_id, tool_call_id_of

REASON = "tool_call"


def decisions_for(request: Request, viewer: str | None) -> list[str]:
    """The decisions `viewer` may make on `request` here: its rule's allowed ones (no edit or
    answer where a quorum must agree), less what four eyes keep a separated person from (they
    may still reject: `decision_checks.separation_refusal`)."""
    rule = request.rule
    allowed: list[str] = [
        kind for kind in rule.allowed_decisions if rule.quorum == 1 or kind not in ("edit", "respond")
    ]
    if rule.separation is not None and viewer is not None and viewer in rule.separated:
        allowed = [kind for kind in allowed if kind not in SEPARATED_DECISIONS]
    return allowed


def metadata_of(request: Request, viewer: str | None = None) -> dict[str, Any]:
    """Who asks and what, for the client; `allowed_decisions` are `viewer`'s (`decisions_for`)
    when one is named, with `separated: true` when four eyes keep them from approving."""
    view = request.to_dict()
    keys = ("id", "tool", "description", "agent", "app", "thread_id", "tool_call_id", "requester")
    shown = {key: view[key] for key in keys}
    shown.update(
        request_id=shown.pop("id"),
        created_by=request.created_by,
        deadline=view["deadline"],
        allowed_decisions=view["allowed_decisions"],
        approvers=view["approvers"],
        quorum=view["quorum"],
        args=view["args"],
    )
    if viewer is not None:
        shown["allowed_decisions"] = decisions_for(request, viewer)
        if request.rule.separation is not None and viewer in request.rule.separated:
            shown["separated"] = True
    return {"signoff": shown}


def start_event(request: Request, viewer: str | None = None) -> ToolCallStartEvent:
    return ToolCallStartEvent(
        tool_call_id=tool_call_id_of(request),
        tool_call_name=request.tool_name,
        parent_message_id=parent_message_id(request),
        metadata=metadata_of(request, viewer),
    )


def args_event(request: Request, delta: str) -> ToolCallArgsEvent:
    return ToolCallArgsEvent(tool_call_id=tool_call_id_of(request), delta=delta)


def end_event(request: Request) -> ToolCallEndEvent:
    return ToolCallEndEvent(tool_call_id=tool_call_id_of(request))


def interrupt_of(request: Request, viewer: str | None = None) -> Interrupt:
    """The interrupt asking `viewer` (the run's user) to decide: its schema offers only the
    answers they may give."""
    return Interrupt(
        id=tool_call_id_of(request),
        reason=REASON,
        message=request.description,
        tool_call_id=tool_call_id_of(request),
        response_schema=response_schema(request, viewer),
        expires_at=request.to_dict()["deadline"],
        metadata=metadata_of(request, viewer),
    )


def result_event(request: Request, *, note: str | None = None) -> ToolCallResultEvent:
    return ToolCallResultEvent(
        message_id=result_message_id(request),
        tool_call_id=tool_call_id_of(request),
        content=json.dumps(result_of(request, note=note), ensure_ascii=False, default=str),
        role="tool",
    )


def result_of(request: Request, *, note: str | None = None) -> dict[str, Any]:
    """What a TOOL_CALL_RESULT says of a request: how it stands now, who decided, and `note`
    when this run's answer did not decide it (already decided elsewhere, expired, …). An
    expired request is `cancelled` for the client (`expired: true`), as AG-UI has no other word
    for an interrupt that can no longer be answered."""
    view = request.to_dict()
    status = view["status"]
    result: dict[str, Any] = {"request_id": request.id, "status": status}
    if request.status is RequestStatus.EXPIRED:
        result.update(status="cancelled", expired=True)
    if view["decision"] is not None:
        result["decision"] = view["decision"]
    if view["final_args"] is not None:
        result["final_args"] = view["final_args"]
    if note or request.is_terminal:
        result["message"] = note or closed_words(request)
    return result


def closed_words(request: Request) -> str:
    if request.status is RequestStatus.EXPIRED:
        return f"request {request.id} expired at {format_moment(request.deadline)} before anyone decided"
    if request.status is RequestStatus.CANCELLED:
        return f"request {request.id} was cancelled"
    who = f" by {request.decision.actor}" if request.decision else ""
    return f"request {request.id} was {request.status.in_words}{who}"


def response_schema(request: Request, viewer: str | None = None) -> dict[str, Any]:
    """The JSON Schema of the answers this request takes from `viewer` (`decisions_for`, and
    for a question its answer as a plain object: see `answers`)."""
    allowed = decisions_for(request, viewer)
    options: list[dict[str, Any]] = []
    if "approve" in allowed:
        options += [{"const": "approved"}, {"const": True}]
    if "reject" in allowed:
        options += [{"const": "denied"}, {"const": False}]
    yes = "approve" in allowed or "edit" in allowed
    approved: dict[str, Any] = {"type": "boolean"}
    if not (yes and "reject" in allowed):
        approved = {"const": yes}
    properties: dict[str, Any] = {"approved": approved, "reason": {"type": "string"}}
    if "edit" in allowed:
        properties["editedArgs"] = request.args_schema or {"type": "object"}
    if yes or "reject" in allowed:
        options.append(
            {
                "type": "object",
                "properties": properties,
                "required": ["approved"],
                "additionalProperties": False,
            }
        )
    decision: dict[str, Any] = {"type": {"enum": allowed}, "comment": {"type": "string"}}
    if "edit" in allowed:
        decision["args"] = request.args_schema or {"type": "object"}
    if "reject" in allowed or "respond" in allowed:
        decision["message"] = {"type": "string"}
    if "respond" in allowed:
        decision["value"] = request.answer_schema or {}
    options.append({"type": "object", "properties": decision, "required": ["type"]})
    if request.kind == "input" and "respond" in allowed:
        plain: dict[str, Any] = {
            "type": "object",
            "not": {"anyOf": [{"required": ["type"]}, {"required": ["approved"]}]},
        }
        if request.answer_schema is not None:
            plain["allOf"] = [request.answer_schema]
        options.append(plain)
    return {"title": f"Your decision on {request.tool_name}", "anyOf": options}
