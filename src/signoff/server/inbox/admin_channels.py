"""`/admin/channels`: channels and webhooks, for admins (DESIGN §13). Every channel (the channels
file's, read-only here, and those kept in the store), every webhook; add, edit, disable and
enable one, send a test, see its recent deliveries and dead letters and send one again. Each
form calls the one implementation the API and the CLI call (`signoff.channel_admin`, the store's
webhook operations), audited with before and after.

A secret is written once and never shown again: a form shows "set" with a field to replace it,
and an error page never fills a secret back in. A webhook's own signing secret is shown once,
on the page its adding (or rotation) answers with, with a copy button.

The forms are plain POSTs that answer with the page (htmx swaps its `main` in place, keeping the
scroll and the history clean; without scripts the browser shows the page it got).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse

from ...channel_admin import (
    ChannelChange,
    add_channel,
    channel_deliveries,
    channel_view,
    channel_views,
    edit_channel,
    retry_in_lane,
    send_channel_test,
    send_webhook_test,
    set_channel_disabled,
    webhook_deliveries,
)
from ...channels.kind_settings import every_kind_settings, kind_settings, settings_of
from ...channels.sealing import NEW_KEY
from ...errors import InvalidInput, NotFound, SignoffError
from ...store.channel_ops import lane_of_channel, lane_of_webhook
from ...store.webhook_ops import EVENTS
from ..channel_place import place_of
from ..context import Server, server_of
from . import admin_sections
from .admin_page import admin_context
from .page_access import Form, PageCaller
from .rendering import render

KEY = "channels"
admin_sections.section(KEY, "Channels", "Where requests are sent besides the inbox, and webhooks.")
router = APIRouter(include_in_schema=False)
SETTING = "setting."
SECRET = "secret."
REMOVE = "remove."


# -- the index ---------------------------------------------------------------------------------


@router.get("/admin/channels", response_class=HTMLResponse)
async def index(http: HttpRequest, caller: PageCaller, add: str = "") -> HTMLResponse:
    context = await admin_context(http, caller, section=KEY)
    return await _index(http, context, add_kind=add)


async def _index(
    http: HttpRequest, context: dict[str, Any], *, add_kind: str = "", status: int = 200, **said: Any
) -> HTMLResponse:
    server = server_of(http)
    channels = await run_in_threadpool(channel_views, place_of(server))
    webhooks = [webhook.to_dict() for webhook in await run_in_threadpool(server.store.list_webhooks)]
    spec = settings_of(add_kind) if add_kind else None
    context.update(
        channels=channels,
        webhooks=webhooks,
        kinds=every_kind_settings(),
        add_kind=spec,
        has_key=server.settings.secrets_key is not None,
        new_key=NEW_KEY,
        events=EVENTS,
        form=said.pop("form", {}),
        error=said.pop("error", None),
        notice=said.pop("notice", None),
    )
    return render(http, "admin_channels.html", context, status_code=status)


@router.post("/admin/channels", response_class=HTMLResponse)
async def add(http: HttpRequest, caller: PageCaller, form: Form) -> HTMLResponse:
    context = await admin_context(http, caller, section=KEY)
    name, kind = str(form.get("name", "")).strip(), str(form.get("kind", "")).strip()
    server = server_of(http)
    try:
        given = _change(form, kind=kind)
        await run_in_threadpool(
            add_channel, place_of(server), name, given, actor=caller.user.name, via=caller.channel
        )
    except SignoffError as exc:
        kept = {key: str(value) for key, value in form.items() if not key.startswith(SECRET)}
        said = {"error": exc.message, "form": kept}
        return await _index(http, context, add_kind=kind, status=exc.status_code, **said)
    return await _channel(http, context, name, notice=f"Added the channel {name}: every server uses it now.")


# -- one channel -------------------------------------------------------------------------------


@router.get("/admin/channels/{name}", response_class=HTMLResponse)
async def channel(http: HttpRequest, caller: PageCaller, name: str) -> HTMLResponse:
    context = await admin_context(http, caller, section=KEY)
    return await _channel(http, context, name)


async def _channel(
    http: HttpRequest, context: dict[str, Any], name: str, *, status: int = 200, **said: Any
) -> HTMLResponse:
    server = server_of(http)
    place = place_of(server)
    try:
        view = await run_in_threadpool(channel_view, place, name)
        lane = await run_in_threadpool(channel_deliveries, place, name)
    except NotFound as exc:
        return await _index(http, context, status=404, error=exc.message)
    context.update(
        channel=view,
        spec=settings_of(view["kind"]),
        lane=lane,
        has_key=server.settings.secrets_key is not None,
        new_key=NEW_KEY,
        trial=said.pop("trial", None),
        error=said.pop("error", None),
        notice=said.pop("notice", None),
    )
    return render(http, "admin_channel.html", context, status_code=status)


@router.post("/admin/channels/{name}/edit", response_class=HTMLResponse)
async def edit(http: HttpRequest, caller: PageCaller, form: Form, name: str) -> HTMLResponse:
    context = await admin_context(http, caller, section=KEY)
    place = place_of(server_of(http))
    try:
        version = _number(form, "version", int)
        given = _change(form, kind=None)
        await run_in_threadpool(
            edit_channel, place, name, given, version=version, actor=caller.user.name, via=caller.channel
        )
    except SignoffError as exc:
        return await _channel(http, context, name, status=exc.status_code, error=exc.message)
    return await _channel(http, context, name, notice=f"Saved the channel {name}.")


@router.post("/admin/channels/{name}/disable", response_class=HTMLResponse)
async def disable(http: HttpRequest, caller: PageCaller, name: str) -> HTMLResponse:
    return await _disabled(http, caller, name, True)


@router.post("/admin/channels/{name}/enable", response_class=HTMLResponse)
async def enable(http: HttpRequest, caller: PageCaller, name: str) -> HTMLResponse:
    return await _disabled(http, caller, name, False)


async def _disabled(http: HttpRequest, caller: PageCaller, name: str, disabled: bool) -> HTMLResponse:
    context = await admin_context(http, caller, section=KEY)
    place = place_of(server_of(http))
    try:
        await run_in_threadpool(
            set_channel_disabled, place, name, disabled, actor=caller.user.name, via=caller.channel
        )
    except SignoffError as exc:
        return await _channel(http, context, name, status=exc.status_code, error=exc.message)
    said = "Disabled: it sends nothing, and its callbacks are refused." if disabled else "Enabled."
    return await _channel(http, context, name, notice=f"{name}: {said}")


@router.post("/admin/channels/{name}/test", response_class=HTMLResponse)
async def trial(http: HttpRequest, caller: PageCaller, form: Form, name: str) -> HTMLResponse:
    context = await admin_context(http, caller, section=KEY)
    to = str(form.get("to", "")).strip() or None
    target = str(form.get("target", "")).strip() or None
    try:
        tried = await send_channel_test(
            place_of(server_of(http)), name, to=to, target=target, actor=caller.user.name, via=caller.channel
        )
    except SignoffError as exc:
        return await _channel(http, context, name, status=exc.status_code, error=exc.message)
    return await _channel(http, context, name, trial=tried.to_dict())


@router.post("/admin/channels/{name}/retry", response_class=HTMLResponse)
async def retry(http: HttpRequest, caller: PageCaller, form: Form, name: str) -> HTMLResponse:
    context = await admin_context(http, caller, section=KEY)
    try:
        row = await _retry(server_of(http), lane_of_channel(name), form, caller)
    except SignoffError as exc:
        return await _channel(http, context, name, status=exc.status_code, error=exc.message)
    return await _channel(http, context, name, notice=_queued(row))


def _queued(outbox_id: int) -> str:
    return f"#{outbox_id} is queued again: the delivery worker sends it."


async def _retry(server: Server, lane: str, form: Form, caller: PageCaller) -> int:
    outbox_id: int | None = _number(form, "outbox_id", int)
    if outbox_id is None:
        raise InvalidInput("say which dead letter to send again (outbox_id)")
    await run_in_threadpool(
        retry_in_lane, server.store, lane, outbox_id, actor=caller.user.name, via=caller.channel
    )
    return outbox_id


# -- webhooks ----------------------------------------------------------------------------------


@router.post("/admin/channels/webhooks", response_class=HTMLResponse)
async def add_webhook(http: HttpRequest, caller: PageCaller, form: Form) -> HTMLResponse:
    context = await admin_context(http, caller, section=KEY)
    server = server_of(http)
    try:
        webhook, secret = await run_in_threadpool(
            server.store.add_webhook,
            str(form.get("url", "")).strip(),
            events=[str(event) for event in form.getlist("events")],
            inbound_as=str(form.get("inbound_as", "")).strip() or None,
            description=str(form.get("description", "")).strip() or None,
            allow_private=server.settings.destinations.allow_private,
            actor=caller.user.name,
            channel=caller.channel,
        )
    except SignoffError as exc:
        kept = {key: str(value) for key, value in form.items()}
        return await _index(http, context, status=exc.status_code, error=exc.message, form=kept)
    return await _webhook(http, context, webhook.id, secret=secret, notice="Added the webhook.")


@router.get("/admin/channels/webhooks/{webhook_id}", response_class=HTMLResponse)
async def webhook(http: HttpRequest, caller: PageCaller, webhook_id: str) -> HTMLResponse:
    context = await admin_context(http, caller, section=KEY)
    return await _webhook(http, context, webhook_id)


async def _webhook(
    http: HttpRequest, context: dict[str, Any], webhook_id: str, *, status: int = 200, **said: Any
) -> HTMLResponse:
    store = server_of(http).store
    found = await run_in_threadpool(store.get_webhook, webhook_id)
    if found is None:
        return await _index(http, context, status=404, error=f"no webhook {webhook_id!r}")
    context.update(
        webhook=found.to_dict(),
        lane=await run_in_threadpool(webhook_deliveries, store, webhook_id),
        events=EVENTS,
        secret=said.pop("secret", None),
        trial=said.pop("trial", None),
        error=said.pop("error", None),
        notice=said.pop("notice", None),
    )
    return render(http, "admin_webhook.html", context, status_code=status)


@router.post("/admin/channels/webhooks/{webhook_id}/edit", response_class=HTMLResponse)
async def edit_webhook(http: HttpRequest, caller: PageCaller, form: Form, webhook_id: str) -> HTMLResponse:
    context = await admin_context(http, caller, section=KEY)
    server = server_of(http)
    try:
        current = await run_in_threadpool(server.store.get_webhook, webhook_id)
        url = str(form.get("url", "")).strip() or None
        if current is not None and url == current.shown_url:  # as shown (credentials as ***): kept
            url = None
        await run_in_threadpool(
            server.store.update_webhook,
            webhook_id,
            url=url,
            events=[str(event) for event in form.getlist("events")],
            inbound_as=str(form.get("inbound_as", "")).strip(),
            description=str(form.get("description", "")).strip(),
            allow_private=server.settings.destinations.allow_private,
            actor=caller.user.name,
            channel=caller.channel,
        )
    except SignoffError as exc:
        return await _webhook(http, context, webhook_id, status=exc.status_code, error=exc.message)
    return await _webhook(http, context, webhook_id, notice="Saved the webhook.")


@router.post("/admin/channels/webhooks/{webhook_id}/{action}", response_class=HTMLResponse)
async def webhook_action(
    http: HttpRequest, caller: PageCaller, form: Form, webhook_id: str, action: str
) -> HTMLResponse:
    """disable, enable, test, retry (a dead letter), rotate (the secret, shown once), remove."""
    context = await admin_context(http, caller, section=KEY)
    server = server_of(http)
    store, who, via = server.store, caller.user.name, caller.channel
    said: dict[str, Any] = {}
    try:
        if action in ("disable", "enable"):
            disabled = action == "disable"
            await run_in_threadpool(store.set_webhook_disabled, webhook_id, disabled, actor=who, channel=via)
            said["notice"] = "Disabled: nothing is sent to it." if action == "disable" else "Enabled."
        elif action == "test":
            timeout = server.settings.outbox.webhook_timeout
            tried = await send_webhook_test(place_of(server), webhook_id, timeout=timeout, actor=who, via=via)
            said["trial"] = tried.to_dict()
        elif action == "retry":
            row = await _retry(server, lane_of_webhook(webhook_id), form, caller)
            said["notice"] = _queued(row)
        elif action == "rotate":
            keep_old = form.get("drop_old") is None
            said["secret"] = await run_in_threadpool(
                store.rotate_webhook_secret, webhook_id, keep_old=keep_old, actor=who, channel=via
            )
            said["notice"] = "A new signing secret signs from now on" + (
                " (the previous one too, until a rotation that drops it)." if keep_old else "."
            )
        elif action == "remove":
            await run_in_threadpool(store.remove_webhook, webhook_id, actor=who, channel=via)
            return await _index(http, context, notice=f"Removed the webhook {webhook_id}.")
        else:
            raise NotFound(f"no such action on a webhook: {action!r}")
    except SignoffError as exc:
        return await _webhook(http, context, webhook_id, status=exc.status_code, error=exc.message)
    return await _webhook(http, context, webhook_id, **said)


# -- reading the forms -------------------------------------------------------------------------


def _change(form: Form, *, kind: str | None) -> ChannelChange:
    """A channel form's fields: `setting.KEY`, `secret.KEY` (empty: left as it is),
    `remove.KEY` (a checkbox: remove that setting or secret)."""
    if kind is not None:
        kind_settings(kind)  # an unknown kind is said before anything else
    settings: dict[str, Any] = {}
    secrets: dict[str, str | None] = {}
    for key, value in form.items():
        text = str(value)
        if key.startswith(SETTING):
            settings[key[len(SETTING) :]] = text.strip() or None
        elif key.startswith(SECRET) and text:
            secrets[key[len(SECRET) :]] = text
        elif key.startswith(REMOVE):
            secrets[key[len(REMOVE) :]] = None
    return ChannelChange(
        kind=kind,
        locale=str(form.get("locale", "")).strip() or None,
        timeout=_number(form, "timeout", float),
        concurrency=_number(form, "concurrency", int),
        settings=settings,
        secrets=secrets,
    )


def _number(form: Form, key: str, kind: type[int] | type[float]) -> Any:
    text = str(form.get(key, "")).strip()
    if not text:
        return None
    try:
        return kind(text)
    except ValueError:
        raise InvalidInput(f"{key} must be a number, not {text!r}") from None
