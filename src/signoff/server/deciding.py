"""A person's decision, from whichever surface it comes (API, inbox, handle link), alone or in a
batch (`decide_batch_as`: each request decided here as a single decision would be)."""

from __future__ import annotations

from typing import Any

from ..batch import BatchResult, Selection, decide_batch
from ..decisions import Decision, parse_decision
from ..errors import AutoResumeExceeded, GrantNotAllowed, PermissionDenied, SignoffError
from ..grants import GrantAsk
from ..identity import User, not_a_person
from ..requests import Request
from ..store import Store
from ..unattended import UNATTENDED_ACTOR
from .access import is_creator, visible_request
from .context import Server
from .refusals import audit_refusal

REFUSED = "decision.refused"


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
    (audited), 409, 410, 422; a refused unattended decision is audited too. Once committed,
    the server's event feed takes the decided request from here."""
    store = server.store
    payload = dict(payload)
    grant = GrantAsk.parse(payload.pop("grant")) if payload.get("grant") is not None else None
    payload.pop("grant", None)
    tool_name = store.get_request(request_id).tool_name if "edited_action" in payload else None
    decision = parse_decision(payload, tool_name=tool_name)
    if unattended and grant is not None:
        raise GrantNotAllowed("only a person gives a standing grant")
    if unattended:
        request = store.get_request(request_id)
        try:
            _check_unattended(server, request, decision, user)
        except SignoffError as exc:
            data = {"type": decision.type, "on_behalf": "unattended"}
            raise audit_refusal(
                store, exc, actor=user.name, channel=channel, request_id=request_id, action=REFUSED, data=data
            ) from None
        decided = store.decide(
            request_id, decision, actor=UNATTENDED_ACTOR, channel="unattended", on_behalf=True
        )
    else:
        decided = _decide_as_person(store, request_id, decision, user, channel, grant)
    _tell_feed(server, decided)
    return decided


def decide_batch_as(
    server: Server, selection: Selection, decision: Decision, user: User, *, channel: str
) -> BatchResult:
    """`decision` on each request of `selection` as `user` (see `signoff.batch`): the open
    requests they may decide that match a filter, or the requests named by id (one they may not
    see is skipped, and its refusal audited). Agents never decide batches (403, audited)."""
    store = server.store
    _refuse_if_not_a_person(store, user, channel, data={"type": decision.type, "batch": True})

    def decide_one(request_id: str, decision: Decision) -> Request:
        decided = store.decide(request_id, decision, actor=user.name, channel=channel)
        _tell_feed(server, decided)
        return decided

    return decide_batch(
        store,
        selection,
        decision,
        actor=user.name,
        channel=channel,
        visible=lambda request_id: visible_request(store, request_id, user, channel=channel),
        listing={"visible_to": user.name},
        decide_one=decide_one,
    )


def _tell_feed(server: Server, decided: Request) -> None:
    if decided.is_terminal:  # not a quorum's vote that left it pending
        server.store.on_commit(lambda: server.feed.remember("request.decided", decided))


def _decide_as_person(
    store: Store, request_id: str, decision: Decision, user: User, channel: str, grant: GrantAsk | None = None
) -> Request:
    _refuse_if_not_a_person(store, user, channel, data={"type": decision.type}, request_id=request_id)
    return store.decide(request_id, decision, actor=user.name, channel=channel, grant=grant)


def _check_unattended(server: Server, request: Request, decision: Decision, user: User) -> None:
    """An unattended run's own decision: only its creator's, only what the request's rule lets
    an unattended run decide, and at most the server's `max_auto_resume` rounds per run (the
    request's own round, already counted or not, aside)."""
    if not is_creator(request, user):
        raise PermissionDenied("only the agent that asked may record an unattended decision")
    mode = request.rule.unattended
    if mode == "fail":
        raise PermissionDenied(
            f"the rule of request {request.id} says unattended runs fail: a person must decide it"
        )
    if decision.type not in ("approve", "reject"):
        raise PermissionDenied(f"an unattended run approves or rejects; {decision.type!r} needs a person")
    if mode == "reject" and decision.type != "reject":
        raise PermissionDenied(f"the rule of request {request.id} says unattended runs are rejected")
    limit = server.resolver().rules.defaults.auto_resume_limit()
    own_round = request.round if request.round is not None else request.id
    if server.store.count_auto_rounds(request.thread_id, besides=own_round, created_by=user.name) >= limit:
        raise AutoResumeExceeded(limit)


def _refuse_if_not_a_person(
    store: Store, user: User, channel: str, *, data: dict[str, Any], request_id: str | None = None
) -> None:
    """PermissionDenied (403, audited) when `user` is no person (an agent): only people decide."""
    refused = not_a_person(user.name, user)
    if refused is not None:
        raise audit_refusal(
            store,
            PermissionDenied(refused),
            actor=user.name,
            channel=channel,
            request_id=request_id,
            action=REFUSED,
            data=data,
        )
