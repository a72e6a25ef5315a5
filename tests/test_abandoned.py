"""An approval nobody runs does not stay unseen (issue 17): a request made by a process that
waits to run it (`gate.run`) has its execution recorded from the start; when it is approved and
that process stopped before claiming it, the sweeper marks it `abandoned` (audited), people find
it listed with the in-doubt calls, and a replay of the call still runs it, once (nothing ran).

Liveness as for in-doubt claims: on this host the pid decides, elsewhere the lease (counted from
the approval). Time is moved with the sweep's `now`, or the store module's clock for the server.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from signoff import Approve, ExecutionStatus, Reject, Store
from signoff._util import utcnow
from signoff.cli import app
from signoff.execution import DEFAULT_LEASE
from signoff.store import execution_ops
from tests.conftest import url_for
from tests.helpers import decided_digest
from tests.live import LiveServer
from tests.test_in_doubt import ELSEWHERE, dead_owner, live_owner, status, wait_for
from tests.test_inbox import Person
from tests.test_store_requests import new_request

__all__ = ["dead_owner", "live_owner"]  # fixtures, used by name

ROOT = Path(__file__).resolve().parent.parent
LATER = DEFAULT_LEASE + timedelta(seconds=1)


def approved_for(store: Store, runner: dict[str, Any] | None, *, call: str = "c1") -> str:
    """An approved request that `runner` waited to run (None: nobody waited)."""
    request, _ = store.create_request(new_request(tool_call_id=call, runner=runner))
    store.decide(request.id, Approve(), actor="alice")
    return request.id


def abandoned_entries(store: Store, request_id: str | None = None) -> list[Any]:
    return list(store.audit_entries(request_id=request_id, action="execution.abandoned"))


def agent(store: Store, log: Path) -> subprocess.Popen[str]:
    """tests/scripts/agent.py waiting (blocking) to run its one guarded call."""
    return subprocess.Popen(
        [sys.executable, "-m", "tests.scripts.agent", url_for(store), "run-1", str(log), "block"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )


# -- the store ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_killed_waiter_leaves_its_approval_marked_and_a_replay_runs_it_once(
    store: Store, tmp_path: Path
) -> None:
    log = tmp_path / "tool.log"
    waiting = agent(store, log)
    try:
        [pending] = wait_for(lambda: store.list_requests(thread_id="run-1", status="pending"), timeout=60)
        execution = store.get_execution(pending.id)
        assert execution is not None and execution.status is ExecutionStatus.NOT_STARTED
        assert execution.owner is not None and execution.owner["pid"] == waiting.pid
        os.kill(waiting.pid, signal.SIGKILL)
        waiting.wait(10)
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.wait(10)
        assert waiting.stdout is not None
        waiting.stdout.close()
    store.decide(pending.id, Approve(), actor="alice")
    assert store.mark_abandoned_executions() == [], "not before its lease has run out"
    [marked] = store.mark_abandoned_executions(now=utcnow() + LATER)
    assert (marked.request_id, marked.status) == (pending.id, ExecutionStatus.ABANDONED)
    assert status(store, pending.id) is ExecutionStatus.ABANDONED
    [entry] = abandoned_entries(store, pending.id)
    assert (entry.actor, entry.channel) == ("system", "sweeper")
    assert entry.data["reason"] == "the process waiting to run it stopped before it did"
    assert [e.request_id for e in store.list_executions(status="abandoned")] == [pending.id]
    assert store.mark_abandoned_executions(now=utcnow() + LATER) == []
    assert not log.exists(), "nothing ran"

    replay = agent(store, log)  # the same call again: it finds the approval and runs it
    out, _ = replay.communicate(timeout=60)
    assert replay.returncode == 0, out
    assert "REPLY replayed=False charged cus_42 1999" in out
    assert log.read_text().splitlines() == ["ran cus_42 1999"]
    execution = store.get_execution(pending.id)
    assert execution is not None and (execution.status, execution.attempts) == (ExecutionStatus.SUCCEEDED, 1)
    again = agent(store, log)
    out, _ = again.communicate(timeout=60)
    assert "REPLY replayed=True" in out
    assert log.read_text().splitlines() == ["ran cus_42 1999"], "once"
    assert store.verify_audit().ok


def test_a_live_waiter_is_never_marked_and_another_hosts_after_its_lease(
    store: Store, live_owner: dict[str, Any]
) -> None:
    alive = approved_for(store, live_owner, call="alive")
    remote = approved_for(store, ELSEWHERE, call="remote")
    assert store.mark_abandoned_executions(now=utcnow() + DEFAULT_LEASE / 2) == []
    assert [e.request_id for e in store.mark_abandoned_executions(now=utcnow() + LATER)] == [remote]
    assert status(store, alive) is ExecutionStatus.NOT_STARTED
    [entry] = abandoned_entries(store)
    assert entry.data["reason"] == (
        "the process on elsewhere.example waiting to run it did not claim it within its lease"
    )


def test_calls_nobody_waits_to_run_are_not_marked_and_closed_ones_are_forgotten(
    store: Store, dead_owner: dict[str, Any]
) -> None:
    unwatched = approved_for(store, None, call="unwatched")  # review() / submit(): the caller runs it
    assert store.get_execution(unwatched) is None
    rejected, _ = store.create_request(new_request(tool_call_id="rejected", runner=dead_owner))
    store.decide(rejected.id, Reject(message="no"), actor="alice")
    open_one, _ = store.create_request(new_request(tool_call_id="open", runner=dead_owner))
    assert store.mark_abandoned_executions(now=utcnow() + LATER) == []
    assert store.get_execution(unwatched) is None
    assert store.get_execution(rejected.id) is None, "nothing will run: its record is dropped"
    assert status(store, open_one.id) is ExecutionStatus.NOT_STARTED, "still waited for"
    assert abandoned_entries(store) == []


def test_a_person_lets_it_run_and_it_is_not_marked_again(store: Store, dead_owner: dict[str, Any]) -> None:
    request_id = approved_for(store, dead_owner)
    assert len(store.mark_abandoned_executions(now=utcnow() + LATER)) == 1
    reset = store.reset_execution(request_id, actor="alice")
    assert (reset.status, reset.owner) == (ExecutionStatus.NOT_STARTED, None)
    assert store.mark_abandoned_executions(now=utcnow() + LATER) == []
    assert (
        store.claim_execution(
            request_id, args_digest=decided_digest(store, request_id), lease=timedelta(seconds=30)
        ).kind
        == "claimed"
    )
    assert [entry.action for entry in store.audit_entries(request_id=request_id)][-3:] == [
        "execution.abandoned",
        "execution.reset",
        "execution.started",
    ]


def test_the_cli_lists_the_calls_to_check(store: Store, dead_owner: dict[str, Any]) -> None:
    request_id = approved_for(store, dead_owner)
    runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None, "SIGNOFF_URL": None})
    before = runner.invoke(app, ["--db", url_for(store), "executions"])
    assert before.exit_code == 0, before.output
    assert "No tool call to check." in before.stdout
    store.mark_abandoned_executions(now=utcnow() + LATER)
    listed = runner.invoke(app, ["--db", url_for(store), "executions"])
    assert listed.exit_code == 0, listed.output
    assert request_id in listed.stdout and "approved, never ran" in listed.stdout
    assert "signoff rerun ID" in listed.stdout
    as_json = runner.invoke(app, ["--db", url_for(store), "executions", "--status", "abandoned", "--json"])
    [item] = json.loads(as_json.stdout)
    assert (item["request"]["id"], item["execution"]["status"]) == (request_id, "abandoned")


def test_an_abandoned_call_is_claimed_once(store: Store, dead_owner: dict[str, Any]) -> None:
    request_id = approved_for(store, dead_owner)
    store.mark_abandoned_executions(now=utcnow() + LATER)
    first = store.claim_execution(
        request_id, args_digest=decided_digest(store, request_id), lease=timedelta(seconds=30)
    )
    assert first.kind == "claimed" and first.execution.attempts == 1
    assert (
        store.claim_execution(
            request_id, args_digest=decided_digest(store, request_id), lease=timedelta(seconds=30)
        ).kind
        == "busy"
    )


# -- the server: the sweeper, the API, the inbox ------------------------------------------------


@pytest.fixture
def server(store: Store) -> Iterator[LiveServer]:
    with LiveServer(store) as live:
        yield live


def test_the_sweeper_marks_it_and_people_find_it(
    server: LiveServer, store: Store, dead_owner: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = Person(server, "alice")
    try:
        with server.client(server.user("bot", "agent")) as bot:
            created = bot.post(
                "/v1/requests",
                json={
                    "thread_id": "t1",
                    "tool_call_id": "c1",
                    "tool": "send_email",
                    "args": {"to": "bob"},
                    "approvers": ["alice"],
                    "runner": dead_owner,
                },
            )
            assert created.status_code == 201, created.text
            request_id = created.json()["id"]
            assert bot.get(f"/v1/requests/{request_id}/execution").json()["status"] == "not_started"
            store.decide(request_id, Approve(), actor="alice")
            later = utcnow() + LATER
            monkeypatch.setattr(execution_ops, "utcnow", lambda: later)  # the sweeper's clock moves on
            wait_for(lambda: status(store, request_id) is ExecutionStatus.ABANDONED)
            listed = alice.client.get("/v1/executions", params={"status": "abandoned"}).json()
            assert [item["request_id"] for item in listed["items"]] == [request_id]
        inbox = alice.client.get("/").text
        assert "1 approved tool call never ran: the process waiting to run it stopped first." in inbox
        page = alice.client.get("/executions").text
        assert 'id="abandoned"' in page and f'href="/requests/{request_id}"' in page
        request_page = alice.client.get(f"/requests/{request_id}").text
        assert "Approved, never run: the process waiting to run it stopped before it did. Nothing ran." in (
            request_page
        )
        assert f"signoff rerun {request_id}" in request_page
        remote = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None}).invoke(
            app, ["--url", server.url, "--token", server.user("alice"), "executions"]
        )
        assert remote.exit_code == 0, remote.output
        assert request_id in remote.stdout and "approved, never ran" in remote.stdout
        reset = alice.client.post(f"/requests/{request_id}/execution/reset", data={"csrf_token": alice.csrf})
        assert reset.status_code == 303
        assert status(store, request_id) is ExecutionStatus.NOT_STARTED
        assert "abandoned-notice" not in alice.client.get("/").text
    finally:
        alice.close()


def test_a_claim_that_finds_its_execution_taken_meanwhile_runs_nothing(
    pg_store: Store, dead_owner: dict[str, Any]
) -> None:
    """The sweeper marks the call abandoned between the claim's read and its write: the claim's
    write finds the row moved on and claims nothing, where it used to report a claim it did not
    hold (PostgreSQL: the sweeper locks the execution, not the request)."""
    import threading

    import psycopg

    from signoff.errors import RequestConflict
    from signoff.store.postgres import PostgresStore

    assert isinstance(pg_store, PostgresStore)
    request_id = approved_for(pg_store, dead_owner)
    digest = decided_digest(pg_store, request_id)
    outcome: list[object] = []
    with psycopg.connect(pg_store.url, options=f"-csearch_path={pg_store.schema}") as sweeper:
        sweeper.execute("SELECT 1 FROM executions WHERE request_id = %s FOR UPDATE", (request_id,))

        def claim() -> None:
            try:
                outcome.append(
                    pg_store.claim_execution(request_id, args_digest=digest, lease=timedelta(seconds=30))
                )
            except RequestConflict as exc:
                outcome.append(exc)

        claiming = threading.Thread(target=claim)
        claiming.start()
        wait_for(
            lambda: (
                sweeper.execute(
                    "SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype = 'transactionid'"
                    " AND transactionid = txid_current()::text::xid"
                ).fetchone()[0]  # type: ignore[index]
                > 0
            )
        )
        sweeper.execute("UPDATE executions SET status = 'abandoned' WHERE request_id = %s", (request_id,))
        sweeper.commit()
        claiming.join(10)
    [refused] = outcome
    assert isinstance(refused, RequestConflict) and "nothing ran" in refused.message
    assert status(pg_store, request_id) is ExecutionStatus.ABANDONED
    assert not list(pg_store.audit_entries(request_id=request_id, action="execution.started"))
    claimed = pg_store.claim_execution(request_id, args_digest=digest, lease=timedelta(seconds=30))
    assert claimed.kind == "claimed" and claimed.execution.attempts == 1
