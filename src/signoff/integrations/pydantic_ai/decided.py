"""Finding the decisions of a run's deferred calls in signoff, at once or by waiting.

Only calls signoff holds a request for (by thread and tool_call_id) are answered; calls other
toolsets deferred are left to the caller (`DeferredToolResults.update` merges the two).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic_ai import ModelMessage, ModelRequest, ModelResponse, ToolCallPart
from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai.tools import DeferredToolRequests

from signoff import Gate, Outcome, Pending, Request, Scope, ToolCall

History = Sequence[ModelMessage] | str | bytes
"""A run's messages, or them as saved with `result.all_messages_json()`."""
Deferred = DeferredToolRequests | History
"""What the calls waiting for a decision are read from."""


def messages_of(history: History) -> list[ModelMessage]:
    if isinstance(history, str | bytes):
        return ModelMessagesTypeAdapter.validate_json(history)
    return list(history)


def thread_of(history: History) -> str:
    """The conversation a saved run belongs to: its last message's `conversation_id`."""
    for message in reversed(messages_of(history)):
        if message.conversation_id:
            return message.conversation_id
    raise ValueError("the message history names no conversation_id: give thread_id=...")


def open_calls(history: History) -> list[ToolCallPart]:
    """The tool calls of the history's last model response that have no result yet."""
    messages = messages_of(history)
    answered: set[str] = set()
    for message in reversed(messages):
        if isinstance(message, ModelResponse):
            return [call for call in message.tool_calls if call.tool_call_id not in answered]
        if isinstance(message, ModelRequest):
            answered.update(getattr(part, "tool_call_id", "") for part in message.parts)
    return []


def deferred_calls(deferred: Deferred) -> list[ToolCallPart]:
    if isinstance(deferred, DeferredToolRequests):
        return list(deferred.approvals)
    return open_calls(deferred)


def requests_of(gate: Gate, thread_id: str, calls: Iterable[ToolCallPart]) -> list[Request]:
    """signoff's requests for these calls, in their order (calls it has none for are skipped)."""
    found = (gate.store.find_request(thread_id, call.tool_call_id) for call in calls)
    return [request for request in found if request is not None]


def same_call(request: Request) -> ToolCall:
    """The call as it was asked (its original args), to find its request's outcome again."""
    return ToolCall(name=request.tool_name, args=dict(request.args), id=request.tool_call_id)


def outcomes_now(gate: Gate, scope: Scope, requests: Iterable[Request]) -> dict[str, Outcome | Pending]:
    return {
        request.tool_call_id: gate.submit(same_call(request), scope, resumed=True) for request in requests
    }


def wait_outcomes(
    gate: Gate, scope: Scope, requests: Iterable[Request], timeout: float | None
) -> dict[str, Outcome]:
    return {
        request.tool_call_id: gate.review(same_call(request), scope, timeout=timeout, resumed=True)
        for request in requests
    }


async def await_outcomes(
    gate: Gate, scope: Scope, requests: Sequence[Request], timeout: float | None
) -> dict[str, Outcome]:
    outcomes = await asyncio.gather(
        *(gate.areview(same_call(request), scope, timeout=timeout, resumed=True) for request in requests)
    )
    return {request.tool_call_id: outcome for request, outcome in zip(requests, outcomes, strict=True)}


def decided_only(found: dict[str, Outcome | Pending]) -> dict[str, Outcome] | None:
    """The outcomes when every call has one; None while any is still pending."""
    outcomes: dict[str, Any] = {}
    for key, value in found.items():
        if isinstance(value, Pending):
            return None
        outcomes[key] = value
    return outcomes
