"""Waiting for a person: push wake-ups (in-process and across processes), deadlines, timeouts."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from signoff import (
    Approve,
    Backend,
    Gate,
    Pending,
    RequestExpired,
    RequestStatus,
    ReviewTimeout,
    RuleSet,
    Scope,
    Store,
    ToolCall,
)
from signoff.store.wakeup import WakeupHub
from tests.conftest import url_for
from tests.helpers import person_deciding

ROOT = Path(__file__).resolve().parent.parent

RULES = RuleSet.from_yaml(
    """
tools:
  deploy: {requires_approval: true}
  short_lived: {requires_approval: true, deadline: 0.4s}
  short_lived_approve: {requires_approval: true, deadline: 0.4s, on_expire: approve}
  short_lived_fail: {requires_approval: true, deadline: 0.4s, on_expire: fail}
"""
)

# A huge poll interval: if a waiter wakes, it was pushed.
PUSH_ONLY = 3600.0


def test_an_in_process_decision_wakes_the_waiter(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RULES, poll_interval=PUSH_ONLY)
    with person_deciding(store, Approve()):
        outcome = gate.review(
            ToolCall(name="deploy", args={"env": "prod"}), Scope(thread_id="w1"), timeout=30
        )
    assert outcome.execute and outcome.status == "approved"


def test_a_decision_from_another_process_wakes_the_waiter(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RULES, poll_interval=PUSH_ONLY)
    call = ToolCall(name="deploy", args={"env": "prod"}, id="x1")
    pending = gate.submit(call, Scope(thread_id="w2"))
    assert isinstance(pending, Pending)
    decider = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from signoff import open_store, Approve; time.sleep(0.5); "
            "open_store(sys.argv[1]).decide(sys.argv[2], Approve(), actor='bob', channel='cli')",
            url_for(store),
            pending.request_id,
        ],
        cwd=ROOT,
    )
    try:
        outcome = gate.review(call, Scope(thread_id="w2"), timeout=30)
    finally:
        decider.wait(30)
    assert outcome.actor == "bob"
    assert outcome.execute


SERVER_THREADS = ("AnyIO worker", "signoff-store", "signoff-writer")
"""Name prefixes of the live test server's own workers (when remote): Starlette's threadpool,
the server's store executor and its grouped writer."""


def agent_threads() -> list[threading.Thread]:
    """This process's threads, less the live test server's workers (when remote)."""
    return [thread for thread in threading.enumerate() if not thread.name.startswith(SERVER_THREADS)]


def test_many_async_waiters_hold_no_thread_each(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RULES, poll_interval=PUSH_ONLY)
    hub: WakeupHub = backend.hub  # type: ignore[attr-defined]  # a store's, or a client's
    waiters = 200

    threads_before = len(agent_threads())  # earlier tests' daemon threads may still be about

    async def scenario() -> list[str]:
        tasks = [
            asyncio.create_task(
                gate.areview(ToolCall(name="deploy", args={"n": n}, id=f"a{n}"), Scope(thread_id="many"))
            )
            for n in range(waiters)
        ]
        while len(hub.watched()) < waiters:
            await asyncio.sleep(0.01)
        threads_while_waiting = len(agent_threads()) - threads_before
        assert threads_while_waiting < 20, f"{threads_while_waiting} more threads for {waiters} waiters"
        for request in store.list_requests(thread_id="many", limit=1000):
            await asyncio.to_thread(store.decide, request.id, Approve(), actor="alice")
        outcomes = await asyncio.wait_for(asyncio.gather(*tasks), 60)
        return [outcome.status for outcome in outcomes]

    assert asyncio.run(scenario()) == ["approved"] * waiters


@pytest.mark.parametrize(
    ("tool", "execute", "text"),
    [
        ("short_lived", False, "The approval request expired."),
        ("short_lived_approve", True, None),
    ],
)
def test_the_waiting_agent_gets_the_on_expire_outcome_at_the_deadline(
    backend: Backend, store: Store, tool: str, execute: bool, text: str | None
) -> None:
    gate = Gate(backend, rules=RULES, poll_interval=PUSH_ONLY)
    outcome = gate.review(ToolCall(name=tool, args={}), Scope(thread_id="exp"), timeout=30)
    assert outcome.status == "expired"
    assert outcome.execute is execute
    assert outcome.model_text == text
    [request] = store.list_requests(thread_id="exp")
    assert request.status is RequestStatus.EXPIRED
    assert [e.action for e in store.audit_entries(request_id=request.id)] == [
        "request.created",
        "request.expired",
    ]


def test_an_expiry_that_approves_runs_the_tool_once(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RULES, poll_interval=PUSH_ONLY)
    runs: list[str] = []
    call = ToolCall(name="short_lived_approve", args={"env": "dev"}, id="e1")
    reply = gate.run(
        call, lambda env: runs.append(env) or f"done in {env}", Scope(thread_id="exp-run"), timeout=30
    )
    replay = gate.run(call, lambda env: runs.append(env) or "again", Scope(thread_id="exp-run"))
    assert runs == ["dev"]
    assert (reply.outcome.status, reply.content) == ("expired", "done in dev")
    assert replay.replayed and replay.content == "done in dev"


def test_on_expire_fail_raises(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RULES, poll_interval=PUSH_ONLY)
    with pytest.raises(RequestExpired, match="expired before anyone decided"):
        gate.review(ToolCall(name="short_lived_fail", args={}), Scope(thread_id="exp-fail"), timeout=30)


def test_async_waiters_expire_at_the_deadline_too(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RULES, poll_interval=PUSH_ONLY)
    outcome = asyncio.run(
        gate.areview(ToolCall(name="short_lived", args={}), Scope(thread_id="aexp"), timeout=30)
    )
    assert outcome.status == "expired" and outcome.is_error


def test_a_review_timeout_leaves_the_request_pending_for_a_replay(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RULES)
    call = ToolCall(name="deploy", args={"env": "staging"}, id="slow-person")
    with pytest.raises(ReviewTimeout, match="stays pending"):
        gate.review(call, Scope(thread_id="to"), timeout=0.2)
    [request] = store.list_requests(thread_id="to")
    assert request.status is RequestStatus.PENDING
    store.decide(request.id, Approve(), actor="alice")
    assert gate.review(call, Scope(thread_id="to"), timeout=5).status == "approved"
    assert len(store.list_requests(thread_id="to")) == 1


def test_a_feed_watching_every_change_sees_other_processes_commits(sqlite_store: Store) -> None:
    """With only ANY watched, SQLite checks less often; a request waiter that subscribes then
    is still woken by another process's decision (the check speeds up for it)."""
    from signoff.store import SQLiteStore
    from signoff.store.wakeup import ANY

    from .test_store_requests import new_request

    assert isinstance(sqlite_store, SQLiteStore)
    every_change = sqlite_store.subscribe(ANY)
    other = SQLiteStore(sqlite_store.path)  # its commits reach this store only through the file
    try:
        request, _ = other.create_request(new_request(tool_call_id="from-elsewhere"))
        assert every_change.wait(10)
        one_request = sqlite_store.subscribe(request.id)
        try:
            other.decide(request.id, Approve(), actor="alice")
            assert one_request.wait(10)
        finally:
            sqlite_store.unsubscribe(one_request)
    finally:
        sqlite_store.unsubscribe(every_change)
        other.close()


def test_a_paused_change_check_resumes_when_someone_subscribes() -> None:
    hub = WakeupHub()
    paused = threading.Thread(target=hub.pause, args=(3600,))
    paused.start()
    for attempt in range(200):  # until the thread is surely inside pause(): a subscription ends it
        hub.subscribe(f"req_{attempt}")
        paused.join(0.05)
        if not paused.is_alive():
            break
    assert not paused.is_alive()


# -- idle waiting costs next to nothing: no per-waiter polling, one cheap look per process -------


def test_an_idle_waiter_sleeps_until_its_deadline_unless_woken(store: Store) -> None:
    from signoff.waiting import next_wait

    gate = Gate(store, rules=RULES)
    pending = gate.submit(ToolCall(name="deploy", args={}, id="idle"), Scope(thread_id="idle"))
    assert isinstance(pending, Pending)
    delay = next_wait(store, pending.request, None, gate.poll_interval)
    assert delay is not None
    assert delay > 23 * 3600, (
        "no safety re-read per waiter: the store's source of wake-ups has one per process"
    )


def test_the_sqlite_change_check_costs_the_same_for_any_number_of_waiters(
    sqlite_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many waiters, changes from another process: the watcher runs only `PRAGMA data_version`
    and reads the log entries after the last one it saw, never a query over the watched ids,
    and it wakes exactly the waiters whose requests changed."""
    import sqlite3

    from signoff.store import SQLiteStore

    from .test_store_requests import new_request

    assert isinstance(sqlite_store, SQLiteStore)
    statements: list[str] = []
    connect = sqlite3.connect

    def traced(*args: object, **kwargs: object) -> sqlite3.Connection:
        connection = connect(*args, **kwargs)  # type: ignore[arg-type]
        connection.set_trace_callback(
            lambda sql: (
                statements.append(sql)
                if threading.current_thread().name == "signoff-sqlite-changes"
                else None
            )
        )
        return connection

    monkeypatch.setattr(sqlite3, "connect", traced)
    requests = [sqlite_store.create_request(new_request(tool_call_id=f"w{n}"))[0] for n in range(300)]
    waiters = [sqlite_store.subscribe(request.id) for request in requests]
    other = SQLiteStore(sqlite_store.path)  # another process: its commits reach us only through the file
    try:
        changed = requests[::100]
        for request in changed:
            other.decide(request.id, Approve(), actor="alice")
        for request, waiter in zip(requests, waiters, strict=True):
            if request in changed:
                assert waiter.wait(10), "a waiter whose request changed elsewhere is woken"
    finally:
        other.close()
        for waiter in waiters:
            sqlite_store.unsubscribe(waiter)
    woken = [request for request, waiter in zip(requests, waiters, strict=True) if waiter.wait(0)]
    assert woken == changed
    looks = [sql for sql in statements if not sql.startswith(("PRAGMA data_version", "PRAGMA database_list"))]
    assert looks, "the watcher read what changed"
    assert all("FROM audit_log WHERE seq >" in sql for sql in looks), looks[:3]
    assert len(looks) <= len(changed)
    assert not any(request.id in sql for sql in statements for request in requests)


def test_waiters_are_woken_after_the_listening_connection_comes_back(
    pg_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NOTIFYs sent while the listener is away reach nobody: once it listens again, every waiter
    looks again (the slow fallback poll is off here, so only that can wake this one)."""
    import uuid

    import psycopg

    from signoff.store import postgres

    from .conftest import POSTGRES_DSN
    from .test_store_requests import new_request

    monkeypatch.setattr(postgres, "FALLBACK_POLL", 3600.0)
    name = f"signoff-listen-test-{uuid.uuid4().hex[:8]}"
    monkeypatch.setattr(postgres, "LISTENER_NAME", name)
    may_connect = threading.Event()
    may_connect.set()
    reconnecting = threading.Event()
    connect = psycopg.connect

    def gated(*args: object, **kwargs: object) -> psycopg.Connection[object]:
        if kwargs.get("application_name") == name and not may_connect.is_set():
            reconnecting.set()
            may_connect.wait(10)
        return connect(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(postgres.psycopg, "connect", gated)
    request, _ = pg_store.create_request(new_request())
    waiter = pg_store.subscribe(request.id)
    assert POSTGRES_DSN is not None
    try:
        with psycopg.connect(POSTGRES_DSN, autocommit=True) as admin:
            for _ in range(200):
                found = admin.execute(
                    "SELECT pid FROM pg_stat_activity WHERE application_name = %s AND query LIKE 'LISTEN%%'",
                    (name,),
                ).fetchall()
                if found:
                    break
                time.sleep(0.05)
            assert found, "the listening connection was opened"
            waiter.wait(0.5)  # it fires once as it starts listening
            waiter.clear()
            may_connect.clear()
            admin.execute("SELECT pg_terminate_backend(%s)", (found[0][0],))
        assert reconnecting.wait(10), "the listener tries again after its backend was terminated"
        other = postgres.PostgresStore(
            POSTGRES_DSN,
            schema=pg_store.schema,
            min_size=1,
            max_size=1,
            migrate=False,  # type: ignore[attr-defined]
        )
        try:
            other.decide(request.id, Approve(), actor="alice")  # its NOTIFY reaches nobody
        finally:
            other.close()
        assert not waiter.wait(0.3)
        may_connect.set()
        assert waiter.wait(10), "woken once the listener is back"
    finally:
        may_connect.set()
        pg_store.unsubscribe(waiter)
    assert pg_store.get_request(request.id).status is RequestStatus.APPROVED
