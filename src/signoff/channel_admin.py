"""Administering channels and webhooks: the one implementation the API, the inbox's admin pages
and the CLI (on a database; through a server it calls the API) all call (DESIGN §13).

Channels come from two places: a server's channels file (read-only here: shown "from the
channels file"), and the store, where an admin adds, edits, disables and enables them. A stored
channel's settings are checked against its kind (`channels.kind_settings`) and by building it
as a server would (its platform library's own checks, the destination of a text bridge's URL),
and its secrets are sealed with the secrets key (`channels.sealing`) before anything is stored;
bad input changes nothing. Every change is one audit entry with before and after (the store
writes it), secrets as "set" only.

"Send a test" goes straight through the channel or to the webhook (`channels.trial`), audited;
"recent deliveries" and "dead letters" are the channel's or webhook's lane of the outbox, and a
dead letter is sent again with the outbox's own `retry_dead_letter`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from typing import Any

from .channels.contract import Channel
from .channels.following import ChannelFollower
from .channels.kind_settings import checked_settings
from .channels.registry import (
    ChannelConfig,
    ChannelRegistry,
    Secret,
    build_channel,
    check_name,
    checked_common,
)
from .channels.sealing import NO_KEY, SecretsKey
from .channels.stored import SET, StoredChannel, shown_settings
from .channels.trial import Trial, send_test
from .destinations import Destinations
from .errors import AlreadyExists, ConfigError, Conflict, InvalidInput, NotFound, SignoffError
from .outbox.webhooks import send_test_event
from .store import Store
from .store.channel_ops import lane_of_channel, lane_of_webhook
from .store.outbox_ops import OutboxRow, lane_of

FROM_FILE = "file"
FROM_STORE = "store"


@dataclass(frozen=True, kw_only=True)
class ChannelPlace:
    """Where channels are administered: the store, the key that seals their secrets, where
    they may send to, and the channels in use there (a server's registry; for the CLI, the
    channels file's and the store's, built as a server would)."""

    store: Store
    registry: ChannelRegistry
    follower: ChannelFollower
    key: SecretsKey | None = None
    destinations: Destinations = field(default_factory=Destinations)

    @classmethod
    def local(
        cls, store: Store, registry: ChannelRegistry, *, key: SecretsKey | None, destinations: Destinations
    ) -> ChannelPlace:
        follower = ChannelFollower(registry, store, key=key, destinations=destinations)
        return cls(store=store, registry=registry, follower=follower, key=key, destinations=destinations)

    def follow(self) -> None:
        self.follower.follow()


@dataclass(frozen=True, kw_only=True)
class ChannelChange:
    """What an add or an edit gives. On an edit, what is not given stays as it is; a setting
    or secret given as None (or empty) is removed."""

    kind: str | None = None
    locale: str | None = None
    timeout: float | None = None
    concurrency: int | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    secrets: dict[str, str | None] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Deliveries:
    """A channel's or webhook's recent messages (newest first) and its dead letters."""

    recent: list[OutboxRow]
    dead: list[OutboxRow]

    def to_dict(self) -> dict[str, Any]:
        return {
            "recent": [row.to_dict() for row in self.recent],
            "dead": [row.to_dict() for row in self.dead],
        }


# -- reading ---------------------------------------------------------------------------------------


def channel_views(place: ChannelPlace) -> list[dict[str, Any]]:
    """Every channel: the channels file's and the store's, by name, each with where it comes
    from and whether it is in use here (`state`: ready, disabled or unusable, with `problem`)."""
    place.follow()
    views = {name: _file_view(place, name) for name in place.registry.file_names()}
    for stored in place.store.stored_channels():
        views.setdefault(stored.name, _stored_view(place, stored))
    return [views[name] for name in sorted(views)]


def channel_view(place: ChannelPlace, name: str) -> dict[str, Any]:
    place.follow()
    if name in place.registry.file_names():
        return _file_view(place, name)
    return _stored_view(place, _stored(place, name))


def _file_view(place: ChannelPlace, name: str) -> dict[str, Any]:
    config = place.registry.config_of(name)
    channel = place.registry.get(name)
    assert channel is not None
    settings = dict(config.settings) if config is not None else {}
    plain = {key: value for key, value in settings.items() if not isinstance(value, Secret)}
    return {
        "name": name,
        "kind": channel.kind,
        "locale": config.locale if config is not None else "en",
        "timeout": channel.timeout,
        "concurrency": channel.concurrency,
        "settings": shown_settings(plain),
        "secrets": {key: SET for key, value in sorted(settings.items()) if isinstance(value, Secret)},
        "disabled": False,
        "version": None,
        "created_at": None,
        "created_by": None,
        "updated_at": None,
        "updated_by": None,
        "source": FROM_FILE,
        "state": "ready",
        "problem": None,
    }


def _stored_view(place: ChannelPlace, stored: StoredChannel) -> dict[str, Any]:
    problem = place.registry.unusable.get(stored.name)
    state = "disabled" if stored.disabled else "unusable" if problem else "ready"
    return {**stored.to_dict(), "source": FROM_STORE, "state": state, "problem": problem}


def _stored(place: ChannelPlace, name: str) -> StoredChannel:
    stored = place.store.stored_channel(name)
    if stored is None:
        raise NotFound(f"no channel named {name!r}")
    return stored


def _writable(place: ChannelPlace, name: str) -> StoredChannel:
    if name in place.registry.file_names():
        raise Conflict(
            f"the channel {name} comes from the channels file: change it there (it is read-only here)"
        )
    return _stored(place, name)


# -- changing ----------------------------------------------------------------------------------------


def add_channel(
    place: ChannelPlace, name: str, given: ChannelChange, *, actor: str, via: str
) -> StoredChannel:
    """Keep a new channel (checked, its secrets sealed); every server uses it from its next look
    at the store (this one at once)."""
    check_name(name)
    if name in place.registry.file_names():
        raise AlreadyExists(f"the channels file names a channel {name!r} already")
    if not given.kind:
        raise InvalidInput(f"channel {name!r}: say its kind")
    draft = StoredChannel(name=name, kind=given.kind)
    stored, _ = _prepared(place, draft, given, opened={})
    added = place.store.insert_channel(stored, actor=actor, channel=via)
    place.follow()
    return added


def edit_channel(
    place: ChannelPlace,
    name: str,
    given: ChannelChange,
    *,
    version: int | None = None,
    actor: str,
    via: str,
) -> StoredChannel:
    """Change a stored channel (what `given` names), if it is still at `version` (when given:
    Conflict if someone changed it since). Its secrets stay sealed as they are unless given anew;
    the others must open with this key, for the channel to be checked whole."""
    current = _writable(place, name)
    if given.kind is not None and given.kind != current.kind:
        raise InvalidInput(f"channel {name!r} is a {current.kind} channel: its kind cannot change")
    kept = {key: sealed for key, sealed in current.secrets.items() if key not in given.secrets}
    opened = {}
    for key, sealed in kept.items():
        if place.key is None:
            raise ConfigError(f"channel {name!r} has secrets, and {NO_KEY}")
        try:
            opened[key] = place.key.open(name, key, sealed)
        except ConfigError as exc:
            raise InvalidInput(f"{exc.message} (give it anew to keep the channel usable)") from None
    stored, replaced = _prepared(place, current, given, opened=opened)
    stored = replace(stored, secrets={**kept, **stored.secrets})
    changed = place.store.replace_channel(
        stored,
        version=version if version is not None else current.version,
        replaced=replaced,
        actor=actor,
        channel=via,
    )
    place.follow()
    return changed


def set_channel_disabled(
    place: ChannelPlace, name: str, disabled: bool, *, actor: str, via: str
) -> StoredChannel:
    """Disable a stored channel (it sends nothing: what waits for it is dead-lettered; its
    callbacks are refused), or enable it again."""
    _writable(place, name)
    changed = place.store.set_channel_disabled(name, disabled, actor=actor, channel=via)
    place.follow()
    return changed


def _prepared(
    place: ChannelPlace, base: StoredChannel, given: ChannelChange, *, opened: dict[str, str]
) -> tuple[StoredChannel, list[str]]:
    """`base` changed as `given` says, checked whole (its kind's settings, then built as a
    server builds it), with the secrets given sealed; and the names of those secrets."""
    name, kind = base.name, base.kind
    locale, timeout, concurrency = checked_common(
        name,
        given.locale if given.locale is not None else base.locale,
        given.timeout if given.timeout is not None else base.timeout,
        given.concurrency if given.concurrency is not None else base.concurrency,
    )
    settings = {**base.settings, **given.settings}
    new_secrets = {key: value for key, value in given.secrets.items() if value}
    plain, secrets = checked_settings(name, kind, settings, {**opened, **new_secrets})
    try:
        channel = build_channel(
            ChannelConfig(
                name=name,
                kind=kind,
                locale=locale,
                timeout=timeout,
                concurrency=concurrency,
                settings={**plain, **{key: Secret(value) for key, value in secrets.items()}},
                destinations=place.destinations,
            )
        )
    except SignoffError as exc:
        raise InvalidInput(exc.message) from None
    except Exception as exc:  # the platform library's own complaint about a value
        raise InvalidInput(f"channel {name!r}: {exc}") from None
    del channel  # built to check it; channels hold nothing until they first send
    if new_secrets and place.key is None:
        raise ConfigError(NO_KEY)
    sealed = {}
    for key, value in new_secrets.items():
        assert place.key is not None
        sealed[key] = place.key.seal(name, key, value)
    stored = replace(
        base,
        locale=locale,
        timeout=timeout,
        concurrency=concurrency,
        settings=plain,
        secrets=sealed,
    )
    return stored, sorted(given.secrets)


# -- trying, and what was sent ---------------------------------------------------------------------


async def send_channel_test(
    place: ChannelPlace,
    name: str,
    *,
    to: str | None = None,
    target: str | None = None,
    actor: str,
    via: str,
) -> Trial:
    """Send a test message on the channel, to the verified address `to` has there, or to
    `target` itself; audited (`channel.tested`) with what came of it."""
    channel, address = await asyncio.to_thread(_test_target, place, name, to, target)
    trial = await send_test(channel, address, to)
    data = {"name": name, "to": to, **trial.to_dict()}
    await asyncio.to_thread(place.store.record, "channel.tested", actor=actor, channel=via, data=data)
    return trial


def _test_target(place: ChannelPlace, name: str, to: str | None, target: str | None) -> tuple[Channel, str]:
    place.follow()
    channel = place.registry.get(name)
    if channel is None:
        if name in place.registry.unusable:
            raise Conflict(f"{place.registry.why_not(name)}: it sends nothing")
        raise NotFound(f"no channel named {name!r}")
    if target is not None and target.strip():
        return channel, target.strip()
    if not to:
        raise InvalidInput("say whom to send it to: a user (to) or an address (target)")
    address = place.store.address_of(to, channel.address_kind)
    if address is None:
        raise InvalidInput(
            f"{to} has no verified {channel.address_kind} address (signoff users addresses {to})"
        )
    return channel, address


async def send_webhook_test(
    place: ChannelPlace, webhook_id: str, *, timeout: float, actor: str, via: str
) -> Trial:
    """POST a signed `webhook.test` event to the webhook now; audited (`webhook.tested`)."""
    webhook = await asyncio.to_thread(place.store.get_webhook, webhook_id)
    if webhook is None:
        raise NotFound(f"no webhook {webhook_id!r}")
    if webhook.disabled:
        raise Conflict(f"the webhook {webhook_id} is disabled: it sends nothing")
    trial = await send_test_event(webhook, destinations=place.destinations, timeout=timeout)
    data = {"id": webhook_id, **trial.to_dict()}
    await asyncio.to_thread(place.store.record, "webhook.tested", actor=actor, channel=via, data=data)
    return trial


def channel_deliveries(place: ChannelPlace, name: str) -> Deliveries:
    if name not in place.registry.file_names():
        _stored(place, name)
    return _lane(place.store, lane_of_channel(name))


def webhook_deliveries(store: Store, webhook_id: str) -> Deliveries:
    if store.get_webhook(webhook_id) is None:
        raise NotFound(f"no webhook {webhook_id!r}")
    return _lane(store, lane_of_webhook(webhook_id))


def _lane(store: Store, lane: str) -> Deliveries:
    return Deliveries(recent=store.lane_outbox(lane), dead=store.lane_outbox(lane, dead=True))


def retry_in_lane(store: Store, lane: str, outbox_id: int, *, actor: str, via: str) -> OutboxRow:
    """ "Retry now" on a channel's or webhook's page: the dead letter, if it is that lane's."""
    row = store.get_outbox(outbox_id)
    if row is None or lane_of(row) != lane:
        raise NotFound(f"no outbox row {outbox_id} here")
    return store.retry_dead_letter(outbox_id, actor=actor, channel=via)
