"""Inbound callbacks from the channels: `POST /channels/{name}/callback`.

The channel verifies the callback (`Channel.verify`: signature, freshness, decryption; a
forged or stale one is a 401, audited, and an unreadable one a 400) and says who acted, on
which request, with which decision. Deciding is the server's: the sender is the person whose
verified address on that channel it is (an address only claimed decides nothing: refused and
audited, DESIGN §9; a disabled channel's callbacks are refused and audited too), the request is
named by id, by handle, or (a text reply) by the reply code its message carried, or is the
sender's only open one (`reply_picking`), and the decision goes through the same checks as
every other (`deciding.decide_as`: only approvers, the first decision wins, audited). The
channel then answers its platform (`Channel.answer`). Each inbound action is one structured log
line (thread, request, handle, platform, result). A channel that answers a callback whole
(`Channel.handle`: Slack's modals) is handed a `CallbackHost` (`channel_callbacks`), never the
server. WeCom's callback URL, `/channels/{name}/wecom`, is the same path with the query handed to
the channel and a text answer.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, replace
from typing import Any

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from starlette.responses import JSONResponse, PlainTextResponse, Response

from .._util import utcnow
from ..channels.address_code import NOT_VERIFIED_REPLY
from ..channels.contract import BadCallback, BadSignature, Channel, Inbound, InboundOutcome, InboundResult
from ..channels.inbound_log import log_inbound
from ..channels.texts import ALREADY_REPLY, BY, EXPIRED_REPLY, FINAL, FOUR_EYES_YOU, REPLIES, Locale
from ..errors import (
    AlreadyDecided,
    NotAnApprover,
    NotFound,
    PermissionDenied,
    RequestExpired,
    RequestNotFound,
    SeparationOfDuties,
    SignoffError,
)
from ..identity import User
from ..presentation.refusals import refusal_text
from ..requests import Request
from ..store.idempotency_ops import KeptAnswer
from .context import Server, server_of
from .deciding import REFUSED as DECISION_REFUSED
from .deciding import decide_as
from .refusals import ANONYMOUS, audit_refusal
from .reply_picking import open_choices, pick_request

router = APIRouter(tags=["channels"])
CALLBACK_REFUSED = "callback.refused"


@router.post("/channels/{name}/callback", include_in_schema=False, response_class=JSONResponse)
async def callback(name: str, http: HttpRequest) -> Response:
    """A channel's callback (Slack interactions, WeCom and Feishu card actions, text replies):
    the platforms' own formats, so not in the API's schema."""
    server = server_of(http)
    channel = await callback_channel(server, name)
    body = await http.body()
    headers = {key.lower(): value for key, value in http.headers.items()}
    inbound = await verified(server, channel, lambda: channel.verify(body, headers))
    from .channel_callbacks import ServerCallbacks  # which decides through this module's `act`

    handled = await channel.handle(ServerCallbacks(server), inbound)
    if handled is not None:
        status, payload = handled
        return Response(status_code=status) if payload is None else JSONResponse(payload, status)
    status, payload = await applied(server, channel, inbound)
    return JSONResponse(payload, status)


@router.api_route(
    "/channels/{name}/wecom",
    methods=["GET", "POST"],
    include_in_schema=False,
    response_class=PlainTextResponse,
)
async def wecom_callback(name: str, http: HttpRequest) -> Response:
    """A WeCom channel's callback URL (GET: the URL check; POST: card clicks). WeCom does not fit
    the shared callback: it signs in the query string (`msg_signature`, `timestamp`, `nonce`),
    checks the URL with a GET whose answer is the decrypted `echostr` as plain text, and takes XML
    (encrypted passive replies) back. So the channel is handed the query too and answers text;
    the rest is the shared route's (the refusal audit, `act`). Found by the channel's
    `takes_query`, so this costs nothing without WeCom."""
    server = server_of(http)
    channel = await callback_channel(server, name)
    if not getattr(channel, "takes_query", False):
        raise NotFound(f"no WeCom channel named {name!r} is configured on this server")
    body = await http.body() if http.method == "POST" else b""
    headers = {key.lower(): value for key, value in http.headers.items()}
    query = dict(http.query_params)
    inbound = await verified(server, channel, lambda: channel.verify(body, headers, query))  # type: ignore[call-arg]
    status, payload = await applied(server, channel, inbound)
    text = str(payload)
    media = "application/xml" if text.startswith("<xml>") else "text/plain; charset=utf-8"
    return Response(text, status, media_type=media)


async def applied(server: Server, channel: Channel, inbound: Inbound) -> tuple[int, Any]:
    """A verified callback applied (decided as its sender, unless it only wants a reply) and
    answered in the channel's own format."""
    outcome = None if inbound.kind == "reply" else await server.write(act, server, channel, inbound)
    return channel.answer(inbound, outcome)


async def callback_channel(server: Server, name: str) -> Channel:
    """The channel a callback is for, as the store has it now (a channel disabled a moment ago
    on another replica is disabled here too): a disabled channel's callbacks are refused (403,
    audited), and nothing is decided."""
    await server.run(server.follow_channels)
    channel = server.channels.get(name)
    if channel is not None:
        return channel
    if name in server.channels.unusable:
        refused = PermissionDenied(f"{server.channels.why_not(name)}: its callbacks are refused")
        data = {"reason": server.channels.why_not(name)}
        refusal = {"actor": ANONYMOUS, "channel": name, "action": CALLBACK_REFUSED, "data": data}
        raise await server.run(audit_refusal, server.store, refused, **refusal)
    raise NotFound(f"no channel named {name!r} is configured on this server")


async def verified(server: Server, channel: Channel, verify: Callable[[], Inbound]) -> Inbound:
    """The callback `verify` checks (the channel's signature and format); a refused one is logged,
    and a forged one audited, before its error (401 or 400) is raised."""
    try:
        return verify()
    except (BadSignature, BadCallback) as exc:
        log_inbound(channel, None, None, "refused", why=exc.message)
        if isinstance(exc, BadSignature):
            refusal = {"actor": ANONYMOUS, "channel": channel.name, "action": CALLBACK_REFUSED}
            await server.run(audit_refusal, server.store, exc, **refusal)
        raise


def act(server: Server, channel: Channel, inbound: Inbound) -> InboundOutcome:
    """Decide what a verified callback says, as the person who sent it; what came of it. A
    callback the platform delivers again (the same `delivery_id`: a retried text reply, a
    webhook-id) gets the first outcome again and decides nothing more, on every replica and
    after restarts: the outcome is kept in the store with the decision, as Idempotency-Key
    answers are."""
    if inbound.delivery_id is None:
        return _act(server, channel, inbound)
    namespace = f"channel:{channel.name}"
    key = "delivery-" + hashlib.sha256(inbound.delivery_id.encode()).hexdigest()
    ttl = server.settings.idempotency_ttl
    kept = server.store.kept_answer(namespace, key, ttl=ttl)
    if kept is not None:
        return InboundOutcome(**json.loads(kept.body))
    outcome = _act(server, channel, inbound)
    fresh = KeptAnswer(
        method="POST",
        path=f"/channels/{channel.name}/callback",
        fingerprint=key,
        status=200,
        body=json.dumps(asdict(outcome)),
        created_at=utcnow(),
    )
    if not server.store.keep_answer(namespace, key, fresh, ttl=ttl):
        kept = server.store.kept_answer(namespace, key, ttl=ttl)  # the same delivery, answered meanwhile
        if kept is not None:
            return InboundOutcome(**json.loads(kept.body))
    return outcome


def _act(server: Server, channel: Channel, inbound: Inbound) -> InboundOutcome:
    store = server.store
    locale = channel_locale(server, channel)
    words = REPLIES[locale]
    user_name = store.user_at(channel.address_kind, inbound.sender) if inbound.sender else None
    if user_name is None and inbound.sender and store.address_claimants(channel.address_kind, inbound.sender):
        return _unverified(server, channel, inbound, locale)
    if user_name is None:
        store.record(
            CALLBACK_REFUSED,
            actor=ANONYMOUS,
            channel=channel.name,
            request_id=inbound.request_id,
            data={"reason": "unknown sender", "sender": inbound.sender, "kind": channel.address_kind},
        )
        return _done(channel, inbound, None, "unknown_sender", words["not_linked"])
    user = store.get_user(user_name)
    if user is None or user.disabled:
        return _done(channel, inbound, None, "unknown_sender", words["not_linked"])
    user = replace(user, groups=tuple(store.groups_of(user.name)))
    if inbound.request_id is None and inbound.handle is None:
        return _act_on_reply(server, channel, inbound, user, locale)
    return _decide(server, channel, inbound, user, _request_id(server, inbound, user.name), locale)


def _act_on_reply(
    server: Server, channel: Channel, inbound: Inbound, user: User, locale: Locale
) -> InboundOutcome:
    """A text reply: the request its code names, or the sender's only open one (`reply_picking`);
    the answer lists the sender's requests still open on the channel."""
    picked = pick_request(server.store, channel.name, user.name, inbound.code, locale)
    if picked.refusal is not None:
        outcome = _done(channel, inbound, None, picked.refusal, picked.words)
    else:
        outcome = _decide(server, channel, inbound, user, picked.request_id, locale)
    decided = outcome.request_id if outcome.result == "decided" else None
    choices = open_choices(server.store, channel.name, user.name, leave_out=decided)
    return replace(outcome, choices=choices)


def _decide(
    server: Server, channel: Channel, inbound: Inbound, user: User, request_id: str | None, locale: Locale
) -> InboundOutcome:
    words = REPLIES[locale]
    if request_id is None:
        return _done(channel, inbound, None, "unknown_request", words["nothing_pending"])
    if inbound.decision is None:
        return _done(channel, inbound, request_id, "invalid", words["nothing_decided"])
    try:
        decided = decide_as(server, request_id, dict(inbound.decision), user, channel=channel.name)
    except RequestExpired:
        return _done(channel, inbound, request_id, "expired", EXPIRED_REPLY[locale])
    except RequestNotFound:
        return _done(channel, inbound, None, "unknown_request", words["no_such_request"])
    except (NotAnApprover, AlreadyDecided) as exc:
        refusal = _refusal(exc, _maybe(server, request_id), locale)
        return _done(channel, inbound, request_id, "refused", refusal)
    except SignoffError as exc:
        refusal = _refusal(exc, _maybe(server, request_id), locale)
        return _done(channel, inbound, request_id, "invalid", refusal)
    said = words.get(str(inbound.decision.get("type")), words["approve"])
    if not decided.is_terminal:
        said = words["counted"].format(count=len(decided.approvals), quorum=decided.rule.quorum)
    return _done(channel, inbound, request_id, "decided", said, thread=decided.thread_id)


def _unverified(server: Server, channel: Channel, inbound: Inbound, locale: Locale) -> InboundOutcome:
    """A callback from an address someone claims but nobody has verified: it acts as no one
    (DESIGN §9), is refused, and the refusal audited."""
    store, kind, sender = server.store, channel.address_kind, inbound.sender or ""
    refused = PermissionDenied(f"the {kind} address {sender!r} is not verified for any signoff user")
    data = {"sender": sender, "kind": kind, "claimed_by": store.address_claimants(kind, sender)}
    audit_refusal(
        store,
        refused,
        actor=ANONYMOUS,
        channel=channel.name,
        request_id=inbound.request_id,
        action=DECISION_REFUSED,
        data=data,
    )
    return _done(channel, inbound, inbound.request_id, "unknown_sender", NOT_VERIFIED_REPLY[locale])


def _refusal(error: SignoffError, request: Request | None, locale: Locale) -> str:
    """Why a decision was refused, in the channel's language where it has the words."""
    if isinstance(error, SeparationOfDuties):
        return FOUR_EYES_YOU[locale]
    if isinstance(error, NotAnApprover):
        return REPLIES[locale]["not_an_approver"]
    already = ALREADY_REPLY.get(locale)
    if already is not None and isinstance(error, AlreadyDecided) and request is not None:
        state = FINAL[locale].get(request.status.value, request.status.value)
        who = request.decision.actor if request.decision is not None else None
        return already.format(state=BY[locale].format(state=state, who=who) if who else state)
    return refusal_text(error, request)


def _request_id(server: Server, inbound: Inbound, user: str) -> str | None:
    if inbound.request_id:
        return inbound.request_id
    found = server.store.handle_of(inbound.handle or "")
    if found is None or found[0].name != user:
        return None
    return found[1]


def _maybe(server: Server, request_id: str) -> Request | None:
    try:
        return server.store.get_request(request_id)
    except SignoffError:
        return None


def _done(
    channel: Channel,
    inbound: Inbound,
    request_id: str | None,
    result: InboundResult,
    message: str,
    *,
    thread: str | None = None,
) -> InboundOutcome:
    log_inbound(channel, inbound, request_id, result, thread=thread)
    return InboundOutcome(result=result, message=message, request_id=request_id)


def channel_locale(server: Server, channel: Channel) -> Any:
    config = server.channels.config_of(channel.name)
    return config.locale if config is not None else "en"
