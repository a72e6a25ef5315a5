"""What the callback route offers a channel that answers a callback itself (the channels'
`CallbackHost`): deciding through the shared path (`channel_routes.act`), the request a person
may decide now (for a form to open), a request as it is, and a batch from a chat (the requests
like one, and their approval: `channel_batch`). Slack's modals go through it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .._util import utcnow
from ..batch import BatchResult
from ..channels.contract import Channel, Inbound, InboundOutcome
from ..channels.inbound_log import log_inbound
from ..channels.texts import EXPIRED_REPLY
from ..decision_checks import refuse_if_closed
from ..decisions import Decision
from ..errors import SignoffError
from ..presentation.refusals import refusal_text
from ..requests import Request
from .channel_batch import batch_candidates, decide_channel_batch
from .channel_routes import act, channel_locale
from .context import Server


@dataclass(frozen=True)
class ServerCallbacks:
    """The `CallbackHost` of one server."""

    server: Server

    async def decide(self, channel: Channel, inbound: Inbound) -> InboundOutcome:
        outcome: InboundOutcome = await self.server.write(act, self.server, channel, inbound)
        return outcome

    async def request_to_decide(self, channel: Channel, inbound: Inbound) -> Request | InboundOutcome:
        checked: Request | InboundOutcome = await self.server.write(
            approver_request, self.server, channel, inbound
        )  # refusals are audited
        return checked

    async def request(self, request_id: str) -> Request:
        found: Request = await self.server.run(self.server.store.get_request, request_id)
        return found

    async def batch_candidates(
        self, channel: Channel, inbound: Inbound, request: Request, *, limit: int
    ) -> tuple[list[Request], int]:
        found: tuple[list[Request], int] = await self.server.run(
            batch_candidates, self.server, channel, inbound, request, limit=limit
        )
        return found

    async def decide_batch(
        self, channel: Channel, inbound: Inbound, ids: tuple[str, ...], decision: Decision
    ) -> BatchResult | InboundOutcome:
        done: BatchResult | InboundOutcome = await self.server.write(
            decide_channel_batch, self.server, channel, inbound, ids, decision
        )
        return done


def approver_request(server: Server, channel: Channel, inbound: Inbound) -> Request | InboundOutcome:
    """The request the click is about, if the clicker may decide it now; else why not (audited
    where the approver check refused)."""
    store = server.store
    user = store.user_at(channel.address_kind, inbound.sender) if inbound.sender else None
    if user is None:  # the shared path audits an unknown sender and says so
        return act(server, channel, replace(inbound, kind="decide", decision=None))
    if inbound.request_id is None:
        return _refused(channel, inbound, "unknown_request", "The callback names no request.")
    try:
        request = store.get_request_for(inbound.request_id, user, channel=channel.name)
    except SignoffError as exc:
        return _refused(channel, inbound, "refused", refusal_text(exc, None))
    try:
        refuse_if_closed(request)
    except SignoffError as exc:
        return _refused(channel, inbound, "refused", refusal_text(exc, request))
    if request.deadline <= utcnow():
        return _refused(channel, inbound, "expired", EXPIRED_REPLY[channel_locale(server, channel)])
    return request


def _refused(channel: Channel, inbound: Inbound, result: Any, message: str) -> InboundOutcome:
    log_inbound(channel, inbound, inbound.request_id, result)
    return InboundOutcome(result=result, message=message, request_id=inbound.request_id)
