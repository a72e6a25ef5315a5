"""Agents are kept apart (issue 8, items 11 and 17): an agent sees only the requests it created,
and each agent has its own thread ids, so nobody can take its keys or count into its runs."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from signoff import Approve, Gate, Pending, RuleSet, Scope, ToolCall
from signoff._util import utcnow
from signoff.client import Client
from signoff.requests import NewRequest, RequestStatus
from signoff.store import SQLiteStore, Store
from signoff.store.queries import migration_files
from signoff.store.sqlite_migrations import split_statements

from .live import LiveServer
from .test_events import event_stream, next_event


def new_request(
    call_id: str, *, thread: str = "t1", actor: str = "agent", tool: str = "deploy"
) -> NewRequest:
    return NewRequest(
        thread_id=thread,
        tool_call_id=call_id,
        tool_name=tool,
        args={"env": "prod"},
        description="Deploy?",
        deadline=utcnow() + timedelta(hours=1),
        actor=actor,
    )


def ask(client: httpx.Client, call_id: str = "c1", *, thread: str = "t1", **fields: Any) -> httpx.Response:
    body = {"thread_id": thread, "tool_call_id": call_id, "tool": "deploy", "args": {"env": "prod"}, **fields}
    return client.post("/v1/requests", json=body)


@pytest.fixture
def clients(live_server: LiveServer) -> Iterator[dict[str, httpx.Client]]:
    made = {
        "bot": live_server.client(live_server.user("bot", "agent")),
        "rival": live_server.client(live_server.user("rival", "agent")),
        "alice": live_server.client(live_server.user("alice")),
    }
    yield made
    for client in made.values():
        client.close()


# -- item 17: keys and counts per creating agent -------------------------------------------------


def test_each_creator_has_its_own_keys_threads_and_counts(store: Store) -> None:
    mine, created = store.create_request(new_request("c1", actor="bot"))
    theirs, also_created = store.create_request(new_request("c1", actor="rival"))
    assert created and also_created
    assert mine.id != theirs.id
    assert store.create_request(new_request("c1", actor="bot"))[0].id == mine.id
    found = store.find_request("t1", "c1", created_by="rival")
    assert found is not None
    assert found.id == theirs.id
    assert store.find_request("t1", "c1") is None  # the local gate's creator made none
    assert store.open_requests_in_thread("t1", created_by="bot") == [mine.id]
    store.decide(theirs.id, Approve(), actor="unattended", channel="unattended", on_behalf=True)
    assert store.count_auto_decisions("t1", created_by="rival") == 1
    assert store.count_auto_decisions("t1", created_by="bot") == 0
    assert store.cancel_thread("t1", actor="bot", created_by="bot") == 1
    assert store.get_request(mine.id).status is RequestStatus.CANCELLED
    assert store.get_request(theirs.id).status is RequestStatus.APPROVED


def test_another_agent_cannot_squat_a_key_or_inflate_a_run(
    live_server: LiveServer, clients: dict[str, httpx.Client], store: Store
) -> None:
    rival = clients["rival"]
    squatted = ask(rival, "c1", thread="cron").json()["id"]
    for n in range(3):
        auto = ask(rival, f"a{n}", thread="cron").json()["id"]
        decided = rival.post(
            f"/v1/requests/{auto}/decision", json={"type": "approve", "on_behalf": "unattended"}
        )
        assert decided.status_code == 200
    rules = RuleSet.from_dict({"tools": {"deploy": {"requires_approval": True}}})
    call = ToolCall(name="deploy", args={"env": "prod"}, id="c1")
    with Client(live_server.url, live_server.user("bot", "agent")) as backend:
        gate = Gate(backend, rules=rules, max_auto_resume=2)
        pending = gate.submit(call, Scope(thread_id="cron"))
        assert isinstance(pending, Pending)
        assert pending.request_id != squatted
        assert pending.request.created_by == "bot"
        unattended = gate.review(
            ToolCall(name="deploy", args={"env": "prod"}, id="u1"), Scope(thread_id="cron", unattended=True)
        )
        assert unattended.status == "approved"  # the rival's three auto-decisions are not bot's
    assert store.get_request(squatted).status is RequestStatus.PENDING


def test_a_run_is_counted_and_cancelled_per_agent(
    live_server: LiveServer, clients: dict[str, httpx.Client], store: Store
) -> None:
    bot, rival = clients["bot"], clients["rival"]
    for n in range(3):
        auto = ask(rival, f"a{n}", thread="cron").json()["id"]
        rival.post(f"/v1/requests/{auto}/decision", json={"type": "approve", "on_behalf": "unattended"})
    assert rival.get("/v1/threads/cron/auto-decisions").json() == {"count": 3}
    assert bot.get("/v1/threads/cron/auto-decisions").json() == {"count": 0}
    open_one = ask(rival, "open", thread="cron").json()["id"]
    assert bot.post("/v1/threads/cron/cancel", json={}).json() == {"cancelled": 0}
    assert store.get_request(open_one).status is RequestStatus.PENDING
    assert rival.post("/v1/threads/cron/cancel", json={}).json() == {"cancelled": 1}


def test_the_migration_keeps_every_row_and_gives_old_requests_the_local_creator(tmp_path: Path) -> None:
    """The SQLite table rebuild must not cascade into the rows that reference requests."""
    path = tmp_path / "old.db"
    connection = sqlite3.connect(path)
    connection.execute(
        "CREATE TABLE signoff_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
        "applied_at TEXT NOT NULL)"
    )
    for version, name, sql in migration_files("sqlite"):
        if version > 2:
            break
        for statement in split_statements(sql):
            connection.execute(statement)
        connection.execute(
            "INSERT INTO signoff_migrations VALUES (?, ?, '2025-01-01T00:00:00+00:00')", (version, name)
        )
    now = "2025-01-01T00:00:00+00:00"
    connection.execute(
        "INSERT INTO requests (id, thread_id, tool_call_id, tool_name, args, status, description, rule, "
        "created_at, updated_at, deadline, decided_at, decision, final_args, created_by) VALUES "
        "('req_old', 't', 'c', 'deploy', '{}', 'approved', 'd', ?, ?, ?, ?, ?, ?, '{}', NULL)",
        (
            json.dumps({"approvers": ["alice"]}),
            now,
            now,
            now,
            now,
            json.dumps({"type": "approve", "id": "dec_1", "actor": "alice", "channel": "cli", "at": now}),
        ),
    )
    connection.execute("INSERT INTO request_approvers VALUES ('req_old', 'alice')")
    connection.execute(
        "INSERT INTO decisions VALUES ('dec_1', 'req_old', 'approve', 'alice', 'cli', ?, ?)",
        (json.dumps({"type": "approve"}), now),
    )
    connection.execute(
        "INSERT INTO executions (request_id, status, attempts, updated_at) "
        "VALUES ('req_old', 'succeeded', 1, ?)",
        (now,),
    )
    connection.execute(
        "INSERT INTO deliveries VALUES ('dlv_1', 'req_old', 'web', 'alice', 'sent', 1, NULL, ?, ?)",
        (now, now),
    )
    connection.commit()
    connection.close()
    with SQLiteStore(path) as store:
        request = store.find_request("t", "c")
        assert request is not None
        assert (request.id, request.created_by, request.approvers) == ("req_old", "agent", ("alice",))
        assert [found.id for found in store.list_requests(approver="alice")] == ["req_old"]
        assert [record.actor for record in store.decisions("req_old")] == ["alice"]
        execution = store.get_execution("req_old")
        assert execution is not None
        assert execution.status == "succeeded"
        assert [delivery.target for delivery in store.deliveries_for("req_old")] == ["alice"]
        again, created = store.create_request(new_request("c", thread="t"))
        assert (again.id, created) == ("req_old", False)


# -- item 11: an agent sees only what it created -------------------------------------------------


def test_an_agent_sees_only_its_own_requests_everywhere(clients: dict[str, httpx.Client]) -> None:
    bot, rival, alice = clients["bot"], clients["rival"], clients["alice"]
    request_id = ask(bot).json()["id"]  # no approvers: any person, never another agent
    assert [item["id"] for item in rival.get("/v1/requests").json()["items"]] == []
    assert rival.get("/v1/requests", params={"thread_id": "t1", "tool_call_id": "c1"}).json()["items"] == []
    for path in ("", "/audit", "/decisions", "/deliveries", "/execution", "/wait?timeout=0"):
        refused = rival.get(f"/v1/requests/{request_id}{path}")
        assert refused.status_code == 403, path
        assert refused.json()["error"]["type"] == "NotAnApprover"
    assert rival.post(f"/v1/requests/{request_id}/cancel", json={}).status_code == 403
    assert [item["id"] for item in bot.get("/v1/requests").json()["items"]] == [request_id]
    assert [item["id"] for item in alice.get("/v1/requests").json()["items"]] == [request_id]
    assert alice.get(f"/v1/requests/{request_id}").status_code == 200


def test_another_agents_requests_never_reach_an_agents_event_stream(
    live_server: LiveServer, clients: dict[str, httpx.Client]
) -> None:
    rival_token = live_server.user("rival", "agent")
    alice_token = live_server.user("alice")
    with (
        event_stream(live_server, rival_token) as rival_events,
        event_stream(live_server, alice_token) as seen,
    ):
        theirs = ask(clients["bot"], "c1").json()["id"]
        own = ask(clients["rival"], "c2").json()["id"]
        assert next_event(seen)["request"]["id"] == theirs
        first = next_event(rival_events)
        assert (first["event"], first["request"]["id"]) == ("created", own)
    with event_stream(live_server, rival_token, last_event_id=0) as replayed:  # from the log, too
        assert next_event(replayed)["request"]["id"] == own


def test_the_inbox_pages_refuse_agents(clients: dict[str, httpx.Client]) -> None:
    request_id = ask(clients["bot"]).json()["id"]
    for path in ("/", "/history", f"/requests/{request_id}", "/overview", "/rules"):
        page = clients["bot"].get(path)
        assert page.status_code == 403, path
        assert "The inbox is for people" in page.text
    assert clients["alice"].get(f"/requests/{request_id}").status_code == 200
