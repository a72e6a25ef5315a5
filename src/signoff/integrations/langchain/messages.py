"""The ToolMessages the model sees after a decision: the ones `HumanInTheLoopMiddleware` writes.

A rule that sets its own reject or modify template (signoff's texts, DESIGN §3) gets that text
instead; the stock texts are used where the rule keeps signoff's defaults.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from langchain_core.messages import ToolCall as LcToolCall
from langchain_core.messages import (
    ToolMessage,
    add_notification_metadata,
    message_to_dict,
    messages_from_dict,
)
from langgraph.types import Command

from signoff import Defaults, Outcome, Reject, Reply, Request

_DEFAULTS = Defaults()
NOTIFICATION_SOURCE = "hitl_interrupt_decision"
"""The `lc_source` the stock middleware marks its decision messages with."""
UNATTENDED_CHANNEL = "unattended"


def answer_message(tool_call: LcToolCall, outcome: Outcome, request: Request | None) -> ToolMessage:
    """The message in place of the tool's result when it does not run (reject, respond, expiry,
    cancellation), worded as the stock middleware words it."""
    kind = outcome.decision or "reject"
    content = _stock_rejection(tool_call, request) if kind == "reject" else None
    if content is None:
        content = outcome.model_text or ""
    message = ToolMessage(
        content=content,
        name=tool_call["name"],
        tool_call_id=tool_call["id"],
        status="success" if kind == "respond" else "error",
    )
    data: dict[str, Any] = {"decision": kind}
    if outcome.status not in ("rejected", "responded"):
        data["status"] = outcome.status
    # typed for HumanMessage, but it only copies the message with two additional_kwargs set
    marked: ToolMessage = add_notification_metadata(message, source=NOTIFICATION_SOURCE, data=data)  # type: ignore[arg-type, assignment]
    return marked


def _stock_rejection(tool_call: LcToolCall, request: Request | None) -> str | None:
    """The stock text for a person's reject, or None where signoff's text applies (a rule's own
    reject template, an expiry, an unattended run)."""
    if request is None or request.rule.reject_template != _DEFAULTS.reject_template:
        return None
    record = request.decision
    if record is None or not isinstance(record.decision, Reject) or record.channel == UNATTENDED_CHANNEL:
        return None
    if reason := record.decision.message:
        return f"User rejected the tool call for `{tool_call['name']}` with reason: {reason}"
    return (
        f"User rejected the tool call for `{tool_call['name']}` with id "
        f"{tool_call['id']}. The tool was not executed. Do not retry this tool "
        "call unless the user explicitly requests it."
    )


def edit_notice_text(outcome: Outcome, request: Request | None, edit_notice: str | None) -> str | None:
    """What goes before an edited call's result: the stock notice naming the call that ran, or the
    rule's own modify text when it has one."""
    if request is not None and request.rule.modify_template != _DEFAULTS.modify_template:
        return outcome.feedback
    if not edit_notice:
        return None
    args = outcome.final_tool_params or {}
    ran = json.dumps(args, default=str)
    return f"{edit_notice} Executed instead: {outcome.tool_name} with arguments {ran}."


def with_notice(message: ToolMessage, notice: str | None, *, stock: bool) -> ToolMessage:
    """`message` with `notice` before its content, as the stock middleware prepends its notice."""
    if not notice:
        return message
    if isinstance(message.content, str):
        if not message.content:
            return message.model_copy(update={"content": notice})
        head = f"{notice}\n\nTool response:\n" if stock else f"{notice}\n\n"
        return message.model_copy(update={"content": head + message.content})
    block: str | dict[str, Any] = (
        (f"{notice}\n\nTool response:" if stock else notice)
        if message.content and all(isinstance(part, str) for part in message.content)
        else {"type": "text", "text": f"{notice}\n\nTool response:" if stock else notice}
    )
    return message.model_copy(update={"content": [block, *message.content]})


def stored_form(result: ToolMessage | Command[Any]) -> dict[str, Any]:
    """What the store keeps of a tool's result, to give the same message again on a replay."""
    if isinstance(result, ToolMessage):
        return {"tool_message": message_to_dict(result)}
    return {"command": True}


def replayed_message(tool_call: LcToolCall, reply: Reply) -> ToolMessage:
    """The message a tool that had already run gave, rebuilt from the store."""
    value = reply.value
    if isinstance(value, dict) and isinstance(value.get("tool_message"), dict):
        message = messages_from_dict([value["tool_message"]])[0]
        if isinstance(message, ToolMessage):
            return message
    return ToolMessage(
        content=f"The tool `{tool_call['name']}` already ran for this call; its result is not kept.",
        name=tool_call["name"],
        tool_call_id=tool_call["id"],
    )


def tool_result(
    tool_call: LcToolCall,
    reply: Reply,
    produced: list[ToolMessage | Command[Any]],
    request_of: Callable[[Outcome], Request | None],
    edit_notice: str | None,
) -> ToolMessage | Command[Any]:
    """What the tools node returns for a gated call: the answer in the tool's place (reject,
    respond), the tool's own result (`produced` by this run, or replayed from the execution
    record), after an edit with the notice the model needs (its history holds the call it made)."""
    outcome = reply.outcome
    if not reply.executed and not reply.replayed:
        return answer_message(tool_call, outcome, request_of(outcome))
    result = produced[-1] if reply.executed and produced else replayed_message(tool_call, reply)
    if outcome.decision != "edit" or not isinstance(result, ToolMessage):
        return result
    request = request_of(outcome)
    notice = edit_notice_text(outcome, request, edit_notice)
    stock = request is None or notice != outcome.feedback
    return with_notice(result, notice, stock=stock)
