"""Administering channels and webhooks through the API (admins only): list, add, edit, disable and
enable a channel, send a test, read its recent deliveries and dead letters; the same for
webhooks beside their add, remove and rotate (`channels`). Each is `signoff.channel_admin`'s
one implementation, audited with before and after; secrets go in and never come out."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter
from fastapi import Request as HttpRequest

from ...channel_admin import (
    ChannelChange,
    add_channel,
    channel_deliveries,
    channel_view,
    channel_views,
    edit_channel,
    send_channel_test,
    send_webhook_test,
    set_channel_disabled,
    webhook_deliveries,
)
from ..access import Caller, CurrentCaller, CurrentUser, require_admin
from ..channel_place import place_of
from ..context import server_of
from ..errors import API_ERRORS
from .channel_admin_views import (
    ChannelEditBody,
    ChannelTestBody,
    ChannelView,
    DeliveriesView,
    NewChannelBody,
    TrialView,
    WebhookEditBody,
)
from .channel_views import WebhookView
from .shown import ShownAs

router = APIRouter(prefix="/v1", tags=["channels"], responses=API_ERRORS)
ChannelJSON = Annotated[dict[str, Any], ShownAs(ChannelView)]
WebhookJSON = Annotated[dict[str, Any], ShownAs(WebhookView)]
TrialJSON = Annotated[dict[str, Any], ShownAs(TrialView)]
DeliveriesJSON = Annotated[dict[str, Any], ShownAs(DeliveriesView)]


@router.get("/channels", summary="Every channel: the channels file's and those kept in the store (admins)")
def channels(
    http: HttpRequest, user: CurrentUser
) -> Annotated[list[dict[str, Any]], ShownAs(list[ChannelView])]:
    require_admin(user)
    return channel_views(place_of(server_of(http)))


@router.post(
    "/channels",
    status_code=201,
    summary="Add a channel (admins; its secrets are never shown again)",
    description=(
        "Checked against its kind (known settings only, the required ones there, secrets among "
        "`secrets`), and built as the server builds it (a text bridge's `send_url` must be a public "
        "address unless the server allows private ones); its secrets are sealed with the server's "
        "secrets key (without one, a channel with secrets is refused). Every server uses it within "
        "a sweep (this one at once). Audited as `channel.added`."
    ),
)
def add(body: NewChannelBody, http: HttpRequest, caller: CurrentCaller) -> ChannelJSON:
    require_admin(caller.user)
    place = place_of(server_of(http))
    given = ChannelChange(
        kind=body.kind,
        locale=body.locale,
        timeout=body.timeout,
        concurrency=body.concurrency,
        settings=dict(body.settings),
        secrets=dict(body.secrets),
    )
    added = add_channel(place, body.name, given, actor=caller.user.name, via=caller.channel)
    return channel_view(place, added.name)


@router.get("/channels/{name}", summary="One channel (admins; no secrets)")
def get(name: str, http: HttpRequest, user: CurrentUser) -> ChannelJSON:
    require_admin(user)
    return channel_view(place_of(server_of(http)), name)


@router.patch(
    "/channels/{name}",
    summary="Edit a channel kept in the store (admins)",
    description=(
        "What is named changes; the rest stays (a secret not named stays as it is, sealed). A "
        "channel from the channels file is read-only here (409). With `version`, refused (409) if "
        "someone changed it since. Audited as `channel.changed` with before and after."
    ),
)
def edit(name: str, body: ChannelEditBody, http: HttpRequest, caller: CurrentCaller) -> ChannelJSON:
    require_admin(caller.user)
    place = place_of(server_of(http))
    given = ChannelChange(
        locale=body.locale,
        timeout=body.timeout,
        concurrency=body.concurrency,
        settings=dict(body.settings),
        secrets=dict(body.secrets),
    )
    edit_channel(place, name, given, version=body.version, actor=caller.user.name, via=caller.channel)
    return channel_view(place, name)


@router.post(
    "/channels/{name}/disable",
    summary="Disable a channel (admins): it sends nothing, its callbacks are refused",
    description=(
        "Its waiting messages are dead-lettered at once (and any written later when they come up), "
        "so that nothing goes out on it; they can be sent again once it is enabled. Audited as "
        "`channel.disabled`."
    ),
)
def disable(name: str, http: HttpRequest, caller: CurrentCaller) -> ChannelJSON:
    return _disabled(name, True, http, caller)


@router.post("/channels/{name}/enable", summary="Enable a disabled channel again (admins)")
def enable(name: str, http: HttpRequest, caller: CurrentCaller) -> ChannelJSON:
    return _disabled(name, False, http, caller)


def _disabled(name: str, disabled: bool, http: HttpRequest, caller: Caller) -> dict[str, Any]:
    require_admin(caller.user)
    place = place_of(server_of(http))
    set_channel_disabled(place, name, disabled, actor=caller.user.name, via=caller.channel)
    return channel_view(place, name)


@router.post(
    "/channels/{name}/test",
    summary="Send a test message on a channel (admins)",
    description=(
        "To a user's verified address on it (`to`) or to an address (`target`), straight through "
        "the channel; the answer says what the platform answered, or why it failed. Audited as "
        "`channel.tested`."
    ),
)
async def trial(name: str, body: ChannelTestBody, http: HttpRequest, caller: CurrentCaller) -> TrialJSON:
    require_admin(caller.user)
    place = place_of(server_of(http))
    trial = await send_channel_test(
        place, name, to=body.to, target=body.target, actor=caller.user.name, via=caller.channel
    )
    return trial.to_dict()


@router.get("/channels/{name}/deliveries", summary="A channel's recent messages and dead letters (admins)")
async def deliveries(name: str, http: HttpRequest, user: CurrentUser) -> DeliveriesJSON:
    require_admin(user)
    server = server_of(http)
    return (await server.run(channel_deliveries, place_of(server), name)).to_dict()


# -- webhooks -------------------------------------------------------------------------------------


@router.patch(
    "/webhooks/{webhook_id}",
    summary="Edit a webhook (admins)",
    description=(
        "Its URL (checked as when added), events, `inbound_as` or description; what is not given "
        "stays. Its secrets stay (rotate changes them). Audited as `webhook.changed`."
    ),
)
def edit_webhook(
    webhook_id: str, body: WebhookEditBody, http: HttpRequest, caller: CurrentCaller
) -> WebhookJSON:
    require_admin(caller.user)
    server = server_of(http)
    changed = server.store.update_webhook(
        webhook_id,
        url=body.url,
        events=body.events,
        inbound_as=body.inbound_as,
        description=body.description,
        allow_private=server.settings.destinations.allow_private,
        actor=caller.user.name,
        channel=caller.channel,
    )
    return changed.to_dict()


@router.post(
    "/webhooks/{webhook_id}/disable",
    summary="Disable a webhook (admins): no event is sent to it",
    description="Its waiting events are dead-lettered at once. Audited as `webhook.disabled`.",
)
def disable_webhook(webhook_id: str, http: HttpRequest, caller: CurrentCaller) -> WebhookJSON:
    return _webhook_disabled(webhook_id, True, http, caller)


@router.post("/webhooks/{webhook_id}/enable", summary="Enable a disabled webhook again (admins)")
def enable_webhook(webhook_id: str, http: HttpRequest, caller: CurrentCaller) -> WebhookJSON:
    return _webhook_disabled(webhook_id, False, http, caller)


def _webhook_disabled(webhook_id: str, disabled: bool, http: HttpRequest, caller: Caller) -> dict[str, Any]:
    require_admin(caller.user)
    store = server_of(http).store
    return store.set_webhook_disabled(
        webhook_id, disabled, actor=caller.user.name, channel=caller.channel
    ).to_dict()


@router.post(
    "/webhooks/{webhook_id}/test",
    summary="Send a signed test event to a webhook (admins)",
    description=(
        "A `webhook.test` event, signed and sent as its events are, now; the answer says whether "
        "the receiver took it. Audited as `webhook.tested`."
    ),
)
async def webhook_trial(webhook_id: str, http: HttpRequest, caller: CurrentCaller) -> TrialJSON:
    require_admin(caller.user)
    server = server_of(http)
    trial = await send_webhook_test(
        place_of(server),
        webhook_id,
        timeout=server.settings.outbox.webhook_timeout,
        actor=caller.user.name,
        via=caller.channel,
    )
    return trial.to_dict()


@router.get(
    "/webhooks/{webhook_id}/deliveries", summary="A webhook's recent events and dead letters (admins)"
)
async def webhook_events(webhook_id: str, http: HttpRequest, user: CurrentUser) -> DeliveriesJSON:
    require_admin(user)
    server = server_of(http)
    return (await server.run(webhook_deliveries, server.store, webhook_id)).to_dict()
