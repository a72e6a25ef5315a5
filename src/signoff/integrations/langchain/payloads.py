"""The interrupt values `SignoffMiddleware` raises: the stock shapes, plus where signoff keeps them.

Batched (one per model turn): the stock `HITLRequest` (`action_requests` / `review_configs`, in
the order of the turn's gated calls). Per call: the stock `ToolApprovalRequest` (`type`
"tool_approval", `tool_call_id`, `name`, `args`, `description`). Both carry `"signoff"`: the
thread and, per call, its request id (what `resume_when_decided` waits for).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from langchain_core.messages import ToolCall as LcToolCall

from signoff import Request

from .calls import key


def hitl_request(pending: Iterable[tuple[LcToolCall, Request]], thread_id: str) -> dict[str, Any]:
    """The stock `HITLRequest` for a turn's undecided calls, each with its request."""
    action_requests: list[dict[str, Any]] = []
    review_configs: list[dict[str, Any]] = []
    requests: list[dict[str, Any]] = []
    for call, request in pending:
        action_requests.append(
            {"name": call["name"], "args": call["args"], "description": request.description}
        )
        review_configs.append(
            {"action_name": call["name"], "allowed_decisions": list(request.rule.allowed_decisions)}
        )
        requests.append(_entry(call, request))
    return {
        "action_requests": action_requests,
        "review_configs": review_configs,
        "signoff": {"thread_id": thread_id, "requests": requests},
    }


def tool_approval_request(call: LcToolCall, request: Request, thread_id: str) -> dict[str, Any]:
    """The stock per-call `ToolApprovalRequest` for one undecided call."""
    return {
        "type": "tool_approval",
        "tool_call_id": key(call),
        "name": call["name"],
        "args": call["args"],
        "description": request.description,
        "signoff": {"thread_id": thread_id, "requests": [_entry(call, request)]},
    }


def _entry(call: LcToolCall, request: Request) -> dict[str, Any]:
    return {"request_id": request.id, "tool_call_id": key(call), "name": call["name"], "args": call["args"]}
