"""signoff's decisions as what the model sees in a tool's place, and the values the store keeps.

approve          → the tool's result, as without signoff
edit             → the tool's result after the rule's modify note (the model's history keeps the
                   args it produced, so it is told what ran)
reject, expiry   → the rule's rejection text, with the person's reason
respond          → the person's answer, in the tool's place

A tool's result (a list of `Content`) is kept in signoff's execution record as their dicts, so
that an approval resumed again gives the model the same result without running the tool.
"""

from __future__ import annotations

from typing import Any

from agent_framework import Content

from signoff import Pending, Reply

from .._paused import waiting_on

SIGNOFF_KEY = "signoff"
"""The key of signoff's entry in an approval request's or response's `additional_properties`."""


def kept(value: Any) -> Any:
    """A tool's result as the store keeps it: a list of `Content` as their dicts."""
    if isinstance(value, list) and all(isinstance(item, Content) for item in value):
        return [item.to_dict() for item in value]
    return value


def revived(value: Any) -> Any:
    """`kept`'s inverse: what the function-invocation loop takes as the tool's result."""
    if isinstance(value, list) and value and all(isinstance(item, dict) and "type" in item for item in value):
        return [Content.from_dict(item) for item in value]
    return value


def as_model_text(value: Any) -> str:
    """The text of a tool's result, as the model reads it."""
    if isinstance(value, list) and all(isinstance(item, Content) for item in value):
        return "\n".join(item.text or "" for item in value)
    return value if isinstance(value, str) else str(value)


def model_view(reply: Reply) -> Any:
    """What the model gets in the call's place (see the module)."""
    outcome = reply.outcome
    if reply.executed or reply.replayed:
        result = revived(reply.value)
        if outcome.decision == "edit" and outcome.feedback:
            return f"{outcome.feedback}\n\n{as_model_text(result)}"
        return result
    return outcome.model_text or ""  # the rejection text, or the person's answer as text


def approval_request(
    call_id: str, occurrence_id: str | None, name: str, args: dict[str, Any], pending: Pending
) -> Content:
    """The approval request that pauses the run, naming signoff's request."""
    call = Content.from_function_call(call_id=call_id, name=name, arguments=args, id=occurrence_id)
    return Content.from_function_approval_request(
        id=occurrence_id or call_id,
        function_call=call,
        additional_properties={SIGNOFF_KEY: waiting_on(pending.request)},
    )
