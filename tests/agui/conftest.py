"""A live server per test, with a person (alice) and an agent (bot)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from signoff.server import ServerSettings
from signoff.store import SQLiteStore, Store

from ..live import LiveServer


@dataclass
class World:
    server: LiveServer
    store: Store
    alice: str
    bot: str


@pytest.fixture
def world(sqlite_store: SQLiteStore) -> Iterator[World]:
    with LiveServer(sqlite_store, ServerSettings(sweep_interval=0.2)) as server:
        alice = server.user("alice")
        bot = server.user("bot", "agent")
        yield World(server, sqlite_store, alice, bot)


@pytest.fixture
def any_world(store: Store) -> Iterator[World]:
    """`world` on SQLite and on PostgreSQL."""
    with LiveServer(store, ServerSettings(sweep_interval=0.2)) as server:
        alice = server.user("alice")
        bot = server.user("bot", "agent")
        yield World(server, store, alice, bot)
