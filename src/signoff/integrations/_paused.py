"""What an adapter's pause says of the signoff request a call waits on: ADK's confirmation
payload, a Strands interrupt's reason, a Pydantic AI deferred call's metadata and an Agent
Framework approval request's properties each carry it under the key "signoff"."""

from __future__ import annotations

from typing import Any

from signoff import Request


def waiting_on(request: Request) -> dict[str, Any]:
    """The request's id and thread, the decisions it allows and its deadline (ISO 8601)."""
    return {
        "request_id": request.id,
        "thread_id": request.thread_id,
        "allowed_decisions": list(request.rule.allowed_decisions),
        "deadline": request.deadline.isoformat(),
    }
