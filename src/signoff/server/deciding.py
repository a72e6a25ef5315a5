"""A person's decision, from whichever surface it comes (API, inbox, handle link)."""

from __future__ import annotations

from typing import Any

from ..decisions import Decision, parse_decision
from ..errors import PermissionDenied
from ..identity import User
from ..requests import Request
from ..store import Store
from .access import is_creator
from .context import Server

UNATTENDED_ACTOR = "unattended"


def decide_as(
    server: Server,
    request_id: str,
    payload: dict[str, Any],
    user: User,
    *,
    channel: str,
    unattended: bool = False,
) -> Request:
    """Parse and record `payload` as `user`'s decision. Agents never decide, except an
    unattended auto-decision on their own request. Errors carry their HTTP status: 404, 403
    (audited), 409, 410, 422. Once committed, the server's event feed takes the decided request
    from here."""
    store = server.store
    tool_name = store.get_request(request_id).tool_name if "edited_action" in payload else None
    decision = parse_decision(payload, tool_name=tool_name)
    if unattended:
        if not is_creator(store.get_request(request_id), user):
            raise PermissionDenied("only the agent that asked may record an unattended decision")
        decided = store.decide(
            request_id, decision, actor=UNATTENDED_ACTOR, channel="unattended", on_behalf=True
        )
    else:
        decided = _decide_as_person(store, request_id, decision, user, channel)
    if decided.is_terminal:  # not a quorum's vote that left it pending
        store.on_commit(lambda: server.feed.remember("request.decided", decided))
    return decided


def _decide_as_person(store: Store, request_id: str, decision: Decision, user: User, channel: str) -> Request:
    if user.is_agent:
        store.record(
            "decision.refused",
            actor=user.name,
            channel=channel,
            request_id=request_id,
            data={"type": decision.type, "reason": "agents do not decide"},
        )
        raise PermissionDenied(f"{user.name} is an agent; only people decide")
    return store.decide(request_id, decision, actor=user.name, channel=channel)
