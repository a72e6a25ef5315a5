"""Where `signoff channels`, `signoff webhooks` and `signoff outbox` do their work: on a server
(`--url`: the `Client`'s calls, the server checks and audits) or on the database itself
(`LocalChannels`: the same `signoff.channel_admin` operations the server runs, as `--as`, with
this machine's channels file, secrets key and `--allow-private-webhooks`). Both answer with the
API's JSON, so the commands print the same either way."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, Protocol, TypeVar

import typer

from ..channel_admin import (
    ChannelChange,
    ChannelPlace,
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
from ..channels.registry import ChannelRegistry
from ..client import Client
from ..destinations import Destinations
from ..outbox.settings import OutboxSettings
from ..store import Store
from .options import secrets_key
from .state import acting_user, state_of

JSON = dict[str, Any]
T = TypeVar("T")


class ChannelsFace(Protocol):
    def channels(self) -> list[JSON]: ...

    def channel(self, name: str) -> JSON: ...

    def add_channel(
        self,
        name: str,
        kind: str,
        *,
        locale: str = ...,
        timeout: float = ...,
        concurrency: int = ...,
        settings: dict[str, Any] | None = ...,
        secrets: dict[str, str] | None = ...,
    ) -> JSON: ...

    def edit_channel(
        self,
        name: str,
        *,
        version: int | None = ...,
        locale: str | None = ...,
        timeout: float | None = ...,
        concurrency: int | None = ...,
        settings: dict[str, Any] | None = ...,
        secrets: dict[str, str | None] | None = ...,
    ) -> JSON: ...

    def disable_channel(self, name: str) -> JSON: ...

    def enable_channel(self, name: str) -> JSON: ...

    def send_channel_test(self, name: str, *, to: str | None = ..., target: str | None = ...) -> JSON: ...

    def channel_deliveries(self, name: str) -> JSON: ...

    def webhooks(self) -> list[JSON]: ...

    def create_webhook(
        self,
        url: str,
        *,
        events: list[str] | None = ...,
        inbound_as: str | None = ...,
        description: str | None = ...,
    ) -> JSON: ...

    def edit_webhook(
        self,
        webhook_id: str,
        *,
        url: str | None = ...,
        events: list[str] | None = ...,
        inbound_as: str | None = ...,
        description: str | None = ...,
    ) -> JSON: ...

    def disable_webhook(self, webhook_id: str) -> JSON: ...

    def enable_webhook(self, webhook_id: str) -> JSON: ...

    def send_webhook_test(self, webhook_id: str) -> JSON: ...

    def webhook_deliveries(self, webhook_id: str) -> JSON: ...

    def rotate_webhook(self, webhook_id: str, *, keep_old: bool = ...) -> JSON: ...

    def delete_webhook(self, webhook_id: str) -> None: ...

    def outbox_dead(self) -> list[JSON]: ...

    def retry_delivery(self, outbox_id: int) -> JSON: ...


class LocalChannels:
    """`ChannelsFace` on the database itself, acting as `actor` (channel `cli`)."""

    def __init__(self, place: ChannelPlace, *, actor: str) -> None:
        self.place = place
        self.store: Store = place.store
        self.actor = actor

    def _run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run `work`, then close the channels built for it (in the same event loop)."""

        async def run() -> T:
            try:
                return await work
            finally:
                await self.place.registry.close()

        return asyncio.run(run())

    # -- channels -------------------------------------------------------------------------------

    def channels(self) -> list[JSON]:
        return channel_views(self.place)

    def channel(self, name: str) -> JSON:
        return channel_view(self.place, name)

    def add_channel(
        self,
        name: str,
        kind: str,
        *,
        locale: str = "en",
        timeout: float = 10.0,
        concurrency: int = 8,
        settings: dict[str, Any] | None = None,
        secrets: dict[str, str] | None = None,
    ) -> JSON:
        given = ChannelChange(
            kind=kind,
            locale=locale,
            timeout=timeout,
            concurrency=concurrency,
            settings=dict(settings or {}),
            secrets=dict(secrets or {}),
        )
        add_channel(self.place, name, given, actor=self.actor, via="cli")
        return channel_view(self.place, name)

    def edit_channel(
        self,
        name: str,
        *,
        version: int | None = None,
        locale: str | None = None,
        timeout: float | None = None,
        concurrency: int | None = None,
        settings: dict[str, Any] | None = None,
        secrets: dict[str, str | None] | None = None,
    ) -> JSON:
        given = ChannelChange(
            locale=locale,
            timeout=timeout,
            concurrency=concurrency,
            settings=dict(settings or {}),
            secrets=dict(secrets or {}),
        )
        edit_channel(self.place, name, given, version=version, actor=self.actor, via="cli")
        return channel_view(self.place, name)

    def disable_channel(self, name: str) -> JSON:
        set_channel_disabled(self.place, name, True, actor=self.actor, via="cli")
        return channel_view(self.place, name)

    def enable_channel(self, name: str) -> JSON:
        set_channel_disabled(self.place, name, False, actor=self.actor, via="cli")
        return channel_view(self.place, name)

    def send_channel_test(self, name: str, *, to: str | None = None, target: str | None = None) -> JSON:
        trial = send_channel_test(self.place, name, to=to, target=target, actor=self.actor, via="cli")
        return self._run(trial).to_dict()

    def channel_deliveries(self, name: str) -> JSON:
        return channel_deliveries(self.place, name).to_dict()

    # -- webhooks -------------------------------------------------------------------------------

    def webhooks(self) -> list[JSON]:
        return [webhook.to_dict() for webhook in self.store.list_webhooks()]

    def create_webhook(
        self,
        url: str,
        *,
        events: list[str] | None = None,
        inbound_as: str | None = None,
        description: str | None = None,
    ) -> JSON:
        webhook, secret = self.store.add_webhook(
            url,
            events=events or [],
            inbound_as=inbound_as,
            description=description,
            allow_private=self.place.destinations.allow_private,
            actor=self.actor,
        )
        return {**webhook.to_dict(), "secret": secret}

    def edit_webhook(
        self,
        webhook_id: str,
        *,
        url: str | None = None,
        events: list[str] | None = None,
        inbound_as: str | None = None,
        description: str | None = None,
    ) -> JSON:
        changed = self.store.update_webhook(
            webhook_id,
            url=url,
            events=events,
            inbound_as=inbound_as,
            description=description,
            allow_private=self.place.destinations.allow_private,
            actor=self.actor,
        )
        return changed.to_dict()

    def disable_webhook(self, webhook_id: str) -> JSON:
        return self.store.set_webhook_disabled(webhook_id, True, actor=self.actor).to_dict()

    def enable_webhook(self, webhook_id: str) -> JSON:
        return self.store.set_webhook_disabled(webhook_id, False, actor=self.actor).to_dict()

    def send_webhook_test(self, webhook_id: str) -> JSON:
        timeout = OutboxSettings().webhook_timeout
        trial = send_webhook_test(self.place, webhook_id, timeout=timeout, actor=self.actor, via="cli")
        return self._run(trial).to_dict()

    def webhook_deliveries(self, webhook_id: str) -> JSON:
        return webhook_deliveries(self.store, webhook_id).to_dict()

    def rotate_webhook(self, webhook_id: str, *, keep_old: bool = True) -> JSON:
        secret = self.store.rotate_webhook_secret(webhook_id, keep_old=keep_old, actor=self.actor)
        return {"id": webhook_id, "secret": secret}

    def delete_webhook(self, webhook_id: str) -> None:
        self.store.remove_webhook(webhook_id, actor=self.actor)

    # -- the outbox ------------------------------------------------------------------------------

    def outbox_dead(self) -> list[JSON]:
        return [row.to_dict() for row in self.store.dead_letters()]

    def retry_delivery(self, outbox_id: int) -> JSON:
        return self.store.retry_dead_letter(outbox_id, actor=self.actor).to_dict()


def channels_face(
    ctx: typer.Context,
    *,
    as_user: str | None = None,
    channels_file: Path | None = None,
    allow_private: bool = False,
    key_file: Path | None = None,
) -> ChannelsFace:
    """The server's API when the CLI works through one, else the database itself (with this
    machine's channels file, secrets key and destinations)."""
    backing = state_of(ctx).store()
    actor = acting_user(ctx, as_user)
    if isinstance(backing, Client):
        return backing
    destinations = Destinations(allow_private=allow_private)
    registry = ChannelRegistry.load(channels_file, destinations=destinations)
    place = ChannelPlace.local(backing, registry, key=secrets_key(key_file), destinations=destinations)
    return LocalChannels(place, actor=actor)
