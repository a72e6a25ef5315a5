"""A batch decided from a chat message (Slack's "All like this…", `channels.slack_batch`): the
requests a channel's person may approve together, and their batch, decided by
`decide_batch_as` as the inbox's and the API's batches are."""

from __future__ import annotations

from dataclasses import replace

from ..batch import MAX_BATCH, BatchResult, open_like
from ..channels.contract import Channel, Inbound, InboundOutcome
from ..channels.inbound_log import log_inbound
from ..decisions import Decision
from ..errors import SignoffError
from ..presentation.refusals import refusal_text
from ..requests import Request
from .channel_routes import act
from .context import Server
from .deciding import decide_batch_as


def batch_candidates(
    server: Server, channel: Channel, inbound: Inbound, request: Request, *, limit: int = MAX_BATCH
) -> tuple[list[Request], int]:
    """`batch.open_like` for the sender of `inbound` (an approver of `request`, checked
    already); none for a sender no longer placed."""
    store = server.store
    user = store.user_at(channel.address_kind, inbound.sender) if inbound.sender else None
    if user is None:
        return [], 0
    return open_like(store, request, user, tuple(store.groups_of(user)), limit=limit)


def decide_channel_batch(
    server: Server, channel: Channel, inbound: Inbound, ids: tuple[str, ...], decision: Decision
) -> BatchResult | InboundOutcome:
    """`decision` on each of `ids` as the sender of `inbound`, or why not at all (a sender not
    placed: audited by the shared path; a batch refused whole: audited where refused)."""
    store = server.store
    name = store.user_at(channel.address_kind, inbound.sender) if inbound.sender else None
    user = store.get_user(name) if name is not None else None
    if user is None or user.disabled:
        return act(server, channel, replace(inbound, kind="decide", decision=None))
    user = replace(user, groups=tuple(store.groups_of(user.name)))
    try:
        result = decide_batch_as(server, ids, decision, user, channel=channel.name)
    except SignoffError as exc:
        log_inbound(channel, inbound, inbound.request_id, "refused", why=exc.message)
        return InboundOutcome(
            result="refused", message=refusal_text(exc, None), request_id=inbound.request_id
        )
    said = f"{len(result.decided)} decided, {len(result.skipped)} skipped"
    log_inbound(channel, inbound, inbound.request_id, "batch_decided", why=said)
    return result
