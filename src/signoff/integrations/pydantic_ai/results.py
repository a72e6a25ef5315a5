"""signoff's decisions as Pydantic AI values: what a deferred call gets, what the tool returns.

approve            → ToolApproved()
edit               → ToolApproved(override_args=<the person's args>); the result the model
                     sees starts with the rule's modify note (Pydantic AI keeps the model's
                     original args in the history and would not say)
reject, expiry     → ToolDenied(<the rule's text, with the person's reason>)
respond            → the person's answer as the call's result (`DeferredToolResults.calls`
                     on a resume; inline, Pydantic AI only lets approvals through, so the call
                     is approved and signoff's toolset returns the answer without running it)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic_ai import ToolCallPart
from pydantic_ai.tools import DeferredToolResults, ToolApproved, ToolDenied

from signoff import Outcome, Pending, Reply

from .._paused import waiting_on

SIGNOFF_KEY = "signoff"
"""The key of signoff's entry in a deferred call's metadata (and `ctx.tool_call_metadata`)."""


def pending_metadata(pending: Pending) -> dict[str, Any]:
    """The metadata of a call signoff deferred: where its request is kept."""
    request = pending.request
    return {SIGNOFF_KEY: {**waiting_on(request), "description": request.description}}


def deferred_results(
    calls: Iterable[ToolCallPart], outcomes: Mapping[str, Outcome], *, inline: bool = False
) -> DeferredToolResults:
    """The `DeferredToolResults` for decided calls (`outcomes` by tool_call_id)."""
    results = DeferredToolResults()
    for call in calls:
        outcome = outcomes.get(call.tool_call_id)
        if outcome is None:
            continue
        key = call.tool_call_id
        if outcome.decision == "respond" and not inline:
            results.calls[key] = outcome.tool_result
        elif outcome.execute or outcome.decision == "respond":
            edited = outcome.decision == "edit"
            results.approvals[key] = ToolApproved(override_args=outcome.final_tool_params if edited else None)
        else:
            results.approvals[key] = ToolDenied(outcome.model_text or "")
        results.metadata[key] = {SIGNOFF_KEY: decided_metadata(outcome)}
        if outcome.actor:
            results.answered_by[key] = outcome.actor
    return results


def decided_metadata(outcome: Outcome) -> dict[str, Any]:
    return {
        "request_id": outcome.request_id,
        "status": outcome.status,
        "decision": outcome.decision,
        "actor": outcome.actor,
    }


def tool_value(reply: Reply) -> Any:
    """What signoff's toolset returns for a gated call: the tool's result (after the modify note
    when a person changed the args), the person's answer, or a denial with the rule's text."""
    outcome = reply.outcome
    if reply.executed or reply.replayed:
        if outcome.decision == "edit" and outcome.feedback:
            return reply.content
        return reply.value
    if outcome.decision == "respond":
        return outcome.tool_result
    return ToolDenied(outcome.model_text or "")
