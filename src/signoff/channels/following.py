"""A server's channels follow the store: a channel an admin adds, edits, disables or enables is
used (or no longer) by every replica without a restart, as rules follow `rules_version`.

`ChannelFollower.follow()` reads the store's `channels_version` (one small read) and, when it
moved, reads the stored channels and rebuilds those whose version changed, leaving the others
as they are (a text channel's memory of what it sent, Slack's of what it posted). The server
calls it before each claim of the outbox (so no message is sent on a channel disabled before
the claim), before each callback (so a disabled channel's callbacks are refused at once, on
every replica), and on every sweep. Channels replaced or dropped are closed a little later
(`close_retired`), once a send already under way with them has had its time.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Protocol

from ..destinations import Destinations
from ..errors import SignoffError
from .contract import Channel
from .registry import ChannelConfig, ChannelRegistry, build_channel
from .sealing import SecretsKey
from .stored import StoredChannel

log = logging.getLogger("signoff.channels")
CLOSE_MARGIN = 5.0
"""Seconds past a retired channel's timeout before it is closed."""


class ChannelStore(Protocol):
    """What following needs of a store (`Store` is one)."""

    def channels_version(self) -> int: ...

    def stored_channels_at(self) -> tuple[int, list[StoredChannel]]: ...


@dataclass(frozen=True)
class _Built:
    version: int
    channel: Channel
    config: ChannelConfig


class ChannelFollower:
    def __init__(
        self,
        registry: ChannelRegistry,
        store: ChannelStore,
        *,
        key: SecretsKey | None = None,
        destinations: Destinations | None = None,
    ) -> None:
        self.registry = registry
        self.store = store
        self.key = key
        self.destinations = destinations or Destinations()
        self._lock = threading.Lock()
        self._built: dict[str, _Built] = {}
        self._retired: list[tuple[Channel, float]] = []
        self._said: dict[str, str] = {}
        """What was logged about each unusable channel (said once, not at every follow)."""

    def follow(self) -> bool:
        """Bring the registry's stored channels up to the store's; whether anything changed."""
        if self.store.channels_version() == self.registry.stored_version:
            return False
        with self._lock:
            version, stored = self.store.stored_channels_at()
            if version == self.registry.stored_version:
                return False
            self._rebuild(version, stored)
        return True

    def _rebuild(self, version: int, stored: list[StoredChannel]) -> None:
        built: dict[str, _Built] = {}
        unusable: dict[str, str] = {}
        file_names = set(self.registry.file_names())
        for found in stored:
            if found.name in file_names:
                unusable[found.name] = (
                    f"this server's channels file names a channel {found.name!r} too: that one is used"
                )
            elif found.disabled:
                unusable[found.name] = f"the channel {found.name} is disabled"
            else:
                kept = self._built.get(found.name)
                if kept is not None and kept.version == found.version:
                    built[found.name] = kept
                    continue
                try:
                    config = found.config(self.key, self.destinations)
                    channel = build_channel(config)
                except SignoffError as exc:
                    unusable[found.name] = f"{exc.message} (so it is not used here)"
                except Exception as exc:  # a platform library's own complaint
                    unusable[found.name] = f"channel {found.name!r}: {exc} (so it is not used here)"
                else:
                    built[found.name] = _Built(found.version, channel, config)
        now = time.monotonic()
        for name, old in self._built.items():
            if built.get(name) is not old:
                self._retired.append((old.channel, now + old.channel.timeout + CLOSE_MARGIN))
        self._built = built
        self.registry.set_stored(
            version, {name: (entry.channel, entry.config) for name, entry in built.items()}, unusable
        )
        for name, why in unusable.items():
            if self._said.get(name) != why and "disabled" not in why:
                log.warning("%s", why)
        self._said = unusable

    async def close_retired(self, *, all_of_them: bool = False) -> None:
        """Close the channels no longer used whose sends under way have had their time (all of
        them: when the server stops)."""
        now = time.monotonic()
        with self._lock:
            due = [channel for channel, at in self._retired if all_of_them or at <= now]
            self._retired = [(channel, at) for channel, at in self._retired if channel not in due]
        for channel in due:
            try:
                await channel.close()
            except Exception:
                log.exception("closing the retired channel %s failed", channel.name)

    async def close(self) -> None:
        await self.close_retired(all_of_them=True)
