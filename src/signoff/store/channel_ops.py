"""Channels an admin adds, kept in the store (`channels.stored`), and what each channel's or
webhook's lane of the outbox holds.

Every change is audited with the channel as it was (`before`) and as it is (`after`), secrets
as "set" only, and bumps the `channels_version` counter in its transaction: servers compare it
to the version their channels were built at and rebuild what changed (`channels.following`),
as they follow `rules_version`. Disabling a channel gives up (dead-letters) its waiting
messages in the same transaction, saying so; an admin can send them again once it is enabled.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .._util import utcnow
from ..errors import AlreadyExists, Conflict, NotFound
from .core import Json, StoreCore, Tx
from .outbox_ops import OutboxRow, outbox_row

if TYPE_CHECKING:
    from ..channels.stored import StoredChannel

CHANNELS_COUNTER = "channels_version"
RECENT = 20
"""How many of a lane's rows the admin pages list."""


def _stored_channel(row: Any) -> StoredChannel:
    """The channel a row holds (its module, with the secrets' sealing, loads with the first)."""
    from ..channels.stored import stored_channel

    return stored_channel(row)


def lane_of_channel(name: str) -> str:
    """A channel's lane, as `outbox_ops.lane_of` names it."""
    return f"channel:{name}"


def lane_of_webhook(webhook_id: str) -> str:
    return f"webhook:{webhook_id}"


def audited(stored: StoredChannel | None) -> dict[str, Any] | None:
    """A channel as its audit entries keep it: what it is set to, secrets as "set" only."""
    if stored is None:
        return None
    shown = stored.to_dict()
    return {
        key: shown[key]
        for key in ("kind", "locale", "timeout", "concurrency", "settings", "secrets", "disabled")
    }


class ChannelOps(StoreCore):
    def channels_version(self) -> int:
        """Bumped by every change to a stored channel: a cheap "did they change?"."""
        with self._read() as tx:
            row = tx.one("get_counter", name=CHANNELS_COUNTER)
            return int(row["value"]) if row else 0

    def stored_channels(self) -> list[StoredChannel]:
        with self._read() as tx:
            return [_stored_channel(row) for row in tx.all("list_channels")]

    def stored_channels_at(self) -> tuple[int, list[StoredChannel]]:
        """The stored channels and the version they are at, read together."""
        with self._read() as tx:
            row = tx.one("get_counter", name=CHANNELS_COUNTER)
            return (int(row["value"]) if row else 0), [
                _stored_channel(found) for found in tx.all("list_channels")
            ]

    def stored_channel(self, name: str) -> StoredChannel | None:
        with self._read() as tx:
            row = tx.one("get_channel", name=name)
        return _stored_channel(row) if row is not None else None

    def insert_channel(self, stored: StoredChannel, *, actor: str, channel: str = "cli") -> StoredChannel:
        """Keep a new channel (its settings checked and its secrets sealed by the caller:
        `channel_admin`); AlreadyExists if the name is taken."""
        with self._transaction() as (tx, _):
            inserted = tx.run(
                "insert_channel",
                name=stored.name,
                kind=stored.kind,
                locale=stored.locale,
                timeout=stored.timeout,
                concurrency=stored.concurrency,
                settings=Json(stored.settings),
                secrets=Json(stored.secrets),
                disabled=stored.disabled,
                now=utcnow(),
                actor=actor,
            )
            if inserted != 1:
                raise AlreadyExists(f"a channel named {stored.name!r} already exists")
            added = self._channel_in(tx, stored.name)
            self._changed(tx, "channel.added", added, None, actor=actor, channel=channel)
        return added

    def replace_channel(
        self,
        stored: StoredChannel,
        *,
        version: int,
        replaced: Iterable[str] = (),
        actor: str,
        channel: str = "cli",
    ) -> StoredChannel:
        """Make the channel `stored` (its kind and name stay), if it is still at `version`
        (Conflict if someone changed it meanwhile). `replaced`: the secrets given anew, which
        the audit entry names."""
        with self._transaction() as (tx, _):
            before = self._channel_in(tx, stored.name)
            changed = tx.run(
                "update_channel",
                name=stored.name,
                version=version,
                locale=stored.locale,
                timeout=stored.timeout,
                concurrency=stored.concurrency,
                settings=Json(stored.settings),
                secrets=Json(stored.secrets),
                now=utcnow(),
                actor=actor,
            )
            if changed != 1:
                raise Conflict(
                    f"channel {stored.name!r} changed meanwhile (now at version {before.version}, "
                    f"the edit started from {version}): look at it again"
                )
            after = self._channel_in(tx, stored.name)
            extra = {"replaced_secrets": sorted(replaced)}
            self._changed(tx, "channel.changed", after, before, actor=actor, channel=channel, extra=extra)
        return after

    def set_channel_disabled(
        self, name: str, disabled: bool, *, actor: str, channel: str = "cli"
    ) -> StoredChannel:
        """Disable a channel (it sends nothing: its waiting messages are dead-lettered now, and
        those written later when they come up; its callbacks are refused), or enable it again.
        Already so: nothing changes."""
        with self._transaction() as (tx, _):
            before = self._channel_in(tx, name)
            now = utcnow()
            if tx.run("set_channel_disabled", name=name, disabled=disabled, now=now, actor=actor) != 1:
                return before
            given_up = 0
            if disabled:
                why = f"the channel {name} was disabled by {actor}"
                given_up = tx.run("dead_letter_lane", lane=lane_of_channel(name), why=why, now=now)
            after = self._channel_in(tx, name)
            action = "channel.disabled" if disabled else "channel.enabled"
            extra = {"dead_lettered": given_up} if disabled else {}
            self._changed(tx, action, after, before, actor=actor, channel=channel, extra=extra)
        return after

    def lane_outbox(self, lane: str, *, limit: int = RECENT, dead: bool = False) -> list[OutboxRow]:
        """A lane's rows (`lane_of_channel`, `lane_of_webhook`), newest first; `dead`: only the
        dead letters."""
        with self._read() as tx:
            rows = tx.all("lane_dead" if dead else "lane_outbox", lane=lane, limit=limit)
        return [outbox_row(row) for row in rows]

    # -- helpers --------------------------------------------------------------------------------

    @staticmethod
    def _channel_in(tx: Tx, name: str) -> StoredChannel:
        row = tx.one("get_channel", name=name)
        if row is None:
            raise NotFound(f"no channel named {name!r} is kept in the store")
        return _stored_channel(row)

    def _changed(
        self,
        tx: Tx,
        action: str,
        after: StoredChannel,
        before: StoredChannel | None,
        *,
        actor: str,
        channel: str,
        extra: dict[str, Any] | None = None,
    ) -> None:
        tx.run("bump_counter", name=CHANNELS_COUNTER)
        data = {"name": after.name, "before": audited(before), "after": audited(after), **(extra or {})}
        self._audit(tx, action, actor=actor, channel=channel, data=data)
