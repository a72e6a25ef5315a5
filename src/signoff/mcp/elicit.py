"""`--elicit`: ask the MCP client's own user in-band, and record the answer as their decision.

Handshake era: an `elicitation/create` request to the client while the call waits (the inbox,
CLI and chat can still decide meanwhile; the first decision wins). 2026-07-28 era, where a
server cannot send requests: the call answers an `InputRequiredResult` and the client retries
it with the user's answer.

Who decides: never the agent. The answer is recorded as a decision by the person named with
`--elicit-as USER` (a local store: checked as any decision of theirs: the request's approvers,
its allowed decisions) or, through a server, by the owner of the person's own token in
`$SIGNOFF_ELICIT_TOKEN` (the server checks it as it checks all decisions), with channel
`mcp-elicit`. A user who dismisses the question (`cancel`) leaves the request to the inbox.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import anyio
import mcp.types as types

from ..backends import Backing
from ..client import Client
from ..decisions import Approve, Decision, Reject
from ..errors import SignoffError
from ..requests import Request

log = logging.getLogger("signoff.mcp")

CHANNEL = "mcp-elicit"
INPUT_KEY = "signoff"
"""The key of the proxy's question in an `InputRequiredResult` (2026-07-28 era)."""


def question_schema(request: Request) -> dict[str, Any]:
    choices = ["approve", *(["reject"] if "reject" in request.rule.allowed_decisions else [])]
    return {
        "type": "object",
        "properties": {
            "decision": {"type": "string", "title": "Decision", "enum": choices},
            "reason": {"type": "string", "title": "Reason (told to the model when rejecting)"},
        },
        "required": ["decision"],
    }


def question_text(request: Request) -> str:
    return f"{request.description}\n\n(signoff request {request.id})"


def elicit_request(request: Request) -> types.ElicitRequest:
    return types.ElicitRequest(
        params=types.ElicitRequestFormParams(
            message=question_text(request), requested_schema=question_schema(request)
        )
    )


def decision_of(answer: types.ElicitResult, request: Request) -> Decision | None:
    """The decision the user's answer makes; None: dismissed, the inbox decides."""
    content = answer.content or {}
    reason = content.get("reason")
    reason = reason if isinstance(reason, str) and reason.strip() else None
    if answer.action == "accept":
        if content.get("decision") == "approve":
            return Approve(comment=reason)
        if content.get("decision") == "reject":
            return Reject(message=reason)
        return None
    if answer.action == "decline" and "reject" in request.rule.allowed_decisions:
        return Reject(message=reason or "Declined in the MCP client.")
    return None


@dataclass(frozen=True)
class ElicitDecider:
    """Records an in-band answer as the decision of the client's user (see the module's text)."""

    backing: Backing
    actor: str

    async def record(self, request: Request, answer: types.ElicitResult) -> None:
        decision = decision_of(answer, request)
        if decision is None:
            return
        backing = self.backing
        try:
            if isinstance(backing, Client):
                client = backing
                await anyio.to_thread.run_sync(lambda: client.decide(request.id, decision))
            else:
                store = backing
                await anyio.to_thread.run_sync(
                    lambda: store.decide(request.id, decision, actor=self.actor, channel=CHANNEL)
                )
        except SignoffError as exc:  # decided elsewhere first, not this user's to decide, ...
            log.warning("the in-band answer to request %s was not recorded: %s", request.id, exc)
