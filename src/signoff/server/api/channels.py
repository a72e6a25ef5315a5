"""The channels API: people's addresses, webhooks (out, and signed decisions in), and what the
outbox holds (administering channels, and editing, testing and disabling webhooks:
`channel_admin`). Admins manage; a person reads and sets their own addresses, which count once the
person enters the code sent there (see `server.addresses`)."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Path
from fastapi import Request as HttpRequest
from starlette.responses import Response

from ...errors import InvalidInput, NotFound, PermissionDenied
from ...identity import User
from ...store.address_ops import AddressState
from ..access import CurrentCaller, CurrentUser, require_admin, visible_request
from ..addresses import code_channel, send_code_as, set_address_as, verify_as
from ..context import server_of
from ..errors import API_ERRORS
from ..idempotency import Answer, answer_once_as
from .channel_views import (
    AddressBody,
    AddressesView,
    AddressView,
    CodeBody,
    InboundDecisionBody,
    NewSecret,
    NewWebhook,
    RotateBody,
    WebhookBody,
    WebhookView,
)
from .request_views import OutboxRowView, RequestView
from .shown import ShownAs, shown_as
from .views import Removed
from .webhook_inbound import decide_from_webhook, verified_body

router = APIRouter(prefix="/v1", tags=["channels"], responses=API_ERRORS)
MAX_ROW_ID = 2**62


def _self_or_admin(user: User, name: str) -> None:
    if user.name != name:
        require_admin(user)


@router.get("/users/{name}/addresses", summary="A person's channel addresses (themself or admins)")
def addresses(
    name: str, http: HttpRequest, user: CurrentUser
) -> Annotated[dict[str, Any], ShownAs(AddressesView)]:
    _self_or_admin(user, name)
    store = server_of(http).store
    if store.get_user(name) is None:
        raise NotFound(f"no user named {name!r}")
    states = store.address_states(name)
    return {
        "user": name,
        "addresses": {state.kind: state.address for state in states},
        "verified": {state.kind: state.verified for state in states},
    }


@router.put(
    "/users/{name}/addresses/{kind}",
    summary="Set a person's address on a channel",
    description=(
        "A person's own address is kept unverified, and a one-time code is sent there (through "
        "the first channel that sends to that kind of address); it counts once the code is "
        "entered (`POST …/verify`). An admin who sets someone else's address sets it verified. "
        "An address someone holds verified cannot be taken (409)."
    ),
)
def set_address(
    name: str, kind: str, body: AddressBody, http: HttpRequest, caller: CurrentCaller
) -> Annotated[dict[str, Any], ShownAs(AddressView)]:
    claimed = set_address_as(server_of(http), caller.user, name, kind, body.address, channel=caller.channel)
    return _address(name, claimed.state, claimed.code_via)


@router.post(
    "/users/{name}/addresses/{kind}/code",
    status_code=202,
    summary="Send a new verification code to one's own unverified address",
    responses={429: {"description": "`TooSoon`: a code was asked for less than a minute ago"}},
)
def send_code(
    name: str, kind: str, http: HttpRequest, caller: CurrentCaller
) -> Annotated[dict[str, Any], ShownAs(AddressView)]:
    server = server_of(http)
    state = send_code_as(server, caller.user, name, kind, channel=caller.channel)
    return _address(name, state, code_channel(server, kind))


@router.post(
    "/users/{name}/addresses/{kind}/verify",
    summary="Verify one's own address with the code sent there",
    description="A wrong code spends one of 5 tries; a code expires after 15 minutes and works once (422).",
)
def verify_address(
    name: str, kind: str, body: CodeBody, http: HttpRequest, caller: CurrentCaller
) -> Annotated[dict[str, Any], ShownAs(AddressView)]:
    state = verify_as(server_of(http), caller.user, name, kind, body.code, channel=caller.channel)
    return _address(name, state, None)


def _address(user: str, state: AddressState, code_via: str | None) -> dict[str, Any]:
    expires = state.code_expires_at
    return {
        "user": user,
        "kind": state.kind,
        "address": state.address,
        "verified": state.verified,
        "code_via": code_via,
        "code_expires_at": expires.isoformat() if expires is not None else None,
    }


@router.delete("/users/{name}/addresses/{kind}", summary="Remove a person's address on a channel")
def remove_address(
    name: str, kind: str, http: HttpRequest, caller: CurrentCaller
) -> Annotated[dict[str, Any], ShownAs(Removed)]:
    _self_or_admin(caller.user, name)
    removed = server_of(http).store.remove_address(name, kind, actor=caller.user.name, channel=caller.channel)
    return {"removed": removed}


@router.get("/webhooks", summary="Webhooks (admins; secrets are never shown)")
def webhooks(
    http: HttpRequest, user: CurrentUser
) -> Annotated[list[dict[str, Any]], ShownAs(list[WebhookView])]:
    require_admin(user)
    return [webhook.to_dict() for webhook in server_of(http).store.list_webhooks()]


@router.post("/webhooks", status_code=201, summary="Add a webhook (admins; its secret is shown once)")
def add_webhook(
    body: WebhookBody, http: HttpRequest, caller: CurrentCaller
) -> Annotated[dict[str, Any], ShownAs(NewWebhook)]:
    require_admin(caller.user)
    webhook, secret = server_of(http).store.add_webhook(
        body.url,
        events=body.events,
        inbound_as=body.inbound_as,
        description=body.description,
        allow_private=server_of(http).settings.destinations.allow_private,
        actor=caller.user.name,
        channel=caller.channel,
    )
    return {**webhook.to_dict(), "secret": secret}


@router.delete("/webhooks/{webhook_id}", summary="Remove a webhook (admins)")
def remove_webhook(
    webhook_id: str, http: HttpRequest, caller: CurrentCaller
) -> Annotated[dict[str, Any], ShownAs(Removed)]:
    require_admin(caller.user)
    server_of(http).store.remove_webhook(webhook_id, actor=caller.user.name, channel=caller.channel)
    return {"removed": True}


@router.post("/webhooks/{webhook_id}/rotate", summary="A new signing secret (admins; shown once)")
def rotate_webhook(
    webhook_id: str, body: RotateBody, http: HttpRequest, caller: CurrentCaller
) -> Annotated[dict[str, Any], ShownAs(NewSecret)]:
    require_admin(caller.user)
    secret = server_of(http).store.rotate_webhook_secret(
        webhook_id, keep_old=body.keep_old, actor=caller.user.name, channel=caller.channel
    )
    return {"id": webhook_id, "secret": secret}


@router.post(
    "/webhooks/{webhook_id}/decisions",
    summary="A decision from a webhook's receiver, signed per Standard Webhooks",
    description=(
        "Verified with the webhook's secrets (`webhook-id`, `webhook-timestamp` within 5 minutes, "
        "`webhook-signature`); a bad signature is a 401 (audited). The `webhook-id` is the "
        "idempotency key: the same message again gets the first answer and changes nothing. The "
        "decision is made as the webhook's `inbound_as` person, through the usual checks."
    ),
    openapi_extra={
        "requestBody": {"content": {"application/json": {"schema": InboundDecisionBody.model_json_schema()}}}
    },
    responses=shown_as(RequestView, description="The decided request."),
)
async def webhook_decision(webhook_id: str, http: HttpRequest) -> Response:
    server = server_of(http)
    raw = await http.body()
    webhook, message_id = await server.run(verified_body, server, webhook_id, raw, dict(http.headers))
    try:
        body = InboundDecisionBody.model_validate(json.loads(raw))
    except (ValueError, TypeError) as exc:
        raise InvalidInput(f"the decision body cannot be used: {exc}") from None
    if webhook.actor is None:
        raise PermissionDenied(f"webhook {webhook_id} does not take decisions (add it with inbound_as)")

    def work() -> Answer:
        return Answer(decide_from_webhook(server, webhook, body.request_id, body.decision))

    return await answer_once_as(http, f"webhook:{webhook.id}", message_id, work)


@router.get("/requests/{request_id}/outbox", summary="What the outbox holds for a request")
def request_outbox(
    request_id: str, http: HttpRequest, caller: CurrentCaller
) -> Annotated[list[dict[str, Any]], ShownAs(list[OutboxRowView])]:
    store = server_of(http).store
    visible_request(store, request_id, caller.user, channel=caller.channel)
    return [row.to_dict() for row in store.outbox_for(request_id)]


@router.get("/outbox/dead", summary="Dead letters: what the outbox gave up sending (admins)")
def dead_letters(
    http: HttpRequest, user: CurrentUser
) -> Annotated[list[dict[str, Any]], ShownAs(list[OutboxRowView])]:
    require_admin(user)
    return [row.to_dict() for row in server_of(http).store.dead_letters()]


@router.post("/outbox/{outbox_id}/retry", summary="Send a dead letter again (admins)")
def retry_dead_letter(
    outbox_id: Annotated[int, Path(ge=1, le=MAX_ROW_ID)], http: HttpRequest, caller: CurrentCaller
) -> Annotated[dict[str, Any], ShownAs(OutboxRowView)]:
    require_admin(caller.user)
    row = server_of(http).store.retry_dead_letter(outbox_id, actor=caller.user.name, channel=caller.channel)
    return row.to_dict()
