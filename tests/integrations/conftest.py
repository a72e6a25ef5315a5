"""The gate the LangChain tests run over: the store itself, or a `Client` of a live `signoff
serve` over that store (with an agent's token). Either way, people decide on the store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from signoff import Client, Gate
from signoff.store import SQLiteStore
from tests.live import LiveServer

AGENT_USER = "mail-agent"


@pytest.fixture(params=["local", "remote"])
def lc_gate(request: pytest.FixtureRequest, sqlite_store: SQLiteStore) -> Iterator[Gate]:
    if request.param == "local":
        yield Gate(sqlite_store)
        return
    with (
        LiveServer(sqlite_store) as server,
        Client(server.url, server.user(AGENT_USER, role="agent")) as client,
    ):
        yield Gate(client)
