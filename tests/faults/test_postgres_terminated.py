"""PostgreSQL backends terminated while agents wait: every connection of signoff's (the pools of
the server and of the agents' gates, and their LISTEN connections) is ended with
`pg_terminate_backend`, twice, while gates wait and people decide through the API. The waits
end with the decisions, no call made after a termination fails, and the audit log verifies."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from signoff import Gate, Outcome, RuleSet, Scope, ToolCall
from signoff.store.postgres import PostgresStore

from ..live import LiveServer
from .pg import tagged_dsn, terminate_backends

pytestmark = pytest.mark.slow
AGENTS = 8
RULES = RuleSet.from_yaml(
    """
tools:
  deploy: {requires_approval: true, approvers: [alice]}
"""
)


@pytest.fixture
def stores(pg_schema: str) -> Iterator[tuple[PostgresStore, PostgresStore, str]]:
    """The server's store and the agents' (as in two processes), all connections tagged."""
    dsn, name = tagged_dsn()
    server_store = PostgresStore(dsn, schema=pg_schema, max_size=6)
    agents_store = PostgresStore(dsn, schema=pg_schema, max_size=6, migrate=False)
    yield server_store, agents_store, name
    agents_store.close()
    server_store.close()


def test_waits_end_with_their_decisions_and_calls_after_terminations_succeed(
    stores: tuple[PostgresStore, PostgresStore, str],
) -> None:
    server_store, agents_store, name = stores
    gate = Gate(agents_store, rules=RULES, poll_interval=1.0)
    outcomes: dict[int, Outcome] = {}
    failures: list[BaseException] = []

    def agent(number: int) -> None:
        try:
            call = ToolCall(name="deploy", args={"service": f"svc-{number}"}, id=f"call-{number}")
            outcomes[number] = gate.review(call, Scope(thread_id=f"run-{number}"), timeout=60)
        except BaseException as exc:  # reported below
            failures.append(exc)

    with LiveServer(server_store) as server, server.client(server.user("alice")) as alice:
        agents = [threading.Thread(target=agent, args=(number,)) for number in range(AGENTS)]
        for thread in agents:
            thread.start()
        waiting = _wait_for_pending(alice, AGENTS)

        assert terminate_backends(name) >= 3  # both pools and the LISTEN connections
        statuses = [alice.get("/v1/requests", params={"status": "pending"}).status_code]
        for number, request in enumerate(waiting):
            if number == AGENTS // 2:
                assert terminate_backends(name) >= 1  # again, half-way through the decisions
            answer = alice.post(f"/v1/requests/{request['id']}/decision", json={"type": "approve"})
            statuses.append(answer.status_code)
            assert answer.status_code == 200, answer.text
        statuses.append(alice.get("/healthz").status_code)

        for thread in agents:
            thread.join(60)
        assert statuses == [200] * len(statuses)
        assert failures == []
        assert sorted(outcomes) == list(range(AGENTS))
        assert all(outcome.execute and outcome.status == "approved" for outcome in outcomes.values())
        assert server_store.verify_audit().ok


def _wait_for_pending(client: httpx.Client, count: int) -> list[dict[str, Any]]:
    give_up = time.monotonic() + 30
    while time.monotonic() < give_up:
        items: list[dict[str, Any]] = client.get("/v1/requests", params={"status": "pending"}).json()["items"]
        if len(items) == count:
            return items
        time.sleep(0.05)
    raise AssertionError(f"{count} requests never became pending")
