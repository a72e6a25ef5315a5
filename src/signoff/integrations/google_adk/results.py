"""signoff's decisions as what the model sees in a tool's place (ADK gives a tool's result to the
model as a dict: a function's other values as `{"result": value}`).

approve          → the tool's result, as without signoff
edit             → the tool's result, with the rule's modify note under "note" (the model's history
                   keeps the args it produced, so it is told what ran)
reject, expiry   → `{"error": <the rule's rejection text, with the person's reason>}` (ADK's own
                   rejection is `{"error": "This tool call is rejected."}`, without a reason)
respond          → `{"result": <the person's answer>}`
"""

from __future__ import annotations

from typing import Any

from signoff import Pending, Reply

from .._paused import waiting_on

SIGNOFF_KEY = "signoff"
"""The key of signoff's entry in a confirmation's payload."""

PAUSED = {"error": "This tool call waits for a person's decision in signoff."}
"""The call's placeholder result while it is paused (ADK's own says "requires confirmation")."""


def as_result(value: Any) -> dict[str, Any]:
    """A tool's value as ADK gives it to the model."""
    if isinstance(value, dict):
        return value
    return {"result": value}


def model_view(reply: Reply) -> dict[str, Any]:
    """What the model gets in the call's place (see the module)."""
    outcome = reply.outcome
    if reply.executed or reply.replayed:
        result = as_result(reply.value)
        if outcome.decision == "edit" and outcome.feedback:
            return {"note": outcome.feedback, **result}
        return result
    text = outcome.model_text or ""
    return {"error": text} if reply.is_error else {"result": text}


def pause_payload(pending: Pending) -> dict[str, Any]:
    """The confirmation's payload: the signoff request the call waits on."""
    return {SIGNOFF_KEY: waiting_on(pending.request)}


def pause_hint(name: str) -> str:
    return f"signoff asks a person about the call of {name}(); resume the run once it is decided."
