"""The SQLite store when the database fails under it: a write that fills the database, a commit
that fails after SQLite rolled the transaction back itself (as on a full disk), a lock held by
another process, a broken schema. Every failure is a signoff error with the real cause, changes
nothing, and leaves the store serving: no lock is left held, no reader is left waiting.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from signoff import Approve, RequestStatus, StoreError, StoreUnavailable
from signoff.store import SQLiteStore, sqlite_connection
from tests.helpers import decided_digest

from .test_store_grouped import pending, status_outside
from .test_store_requests import new_request

HANG = 20.0
"""Seconds after which a store call that has not returned is taken to be stuck for good."""


def finishes(fn: Callable[[], Any]) -> Any:
    """`fn()` in another thread: its result or its exception; fails the test if it never returns
    (a lock left held)."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(("value", fn()))
        except BaseException as exc:
            outcome.append(("error", exc))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(HANG)
    assert not thread.is_alive(), "the store call never returned: a lock was left held"
    kind, value = outcome[0]
    if kind == "error":
        raise value
    return value


def full_disk_error() -> sqlite3.OperationalError:
    error = sqlite3.OperationalError("database or disk is full")
    error.sqlite_errorcode = sqlite3.SQLITE_FULL
    error.sqlite_errorname = "SQLITE_FULL"
    return error


class FailsLikeAFullDisk:
    """The store's write connection, whose next statement matching `when` (by default: COMMIT)
    fails as SQLite does on a full disk: it rolls the whole transaction back itself and reports
    SQLITE_FULL."""

    def __init__(self, connection: sqlite3.Connection, when: Callable[[str], bool] | None = None) -> None:
        self._connection = connection
        self._when = when or (lambda sql: sql == "COMMIT")
        self.armed = True

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if self.armed and self._when(sql):
            self.armed = False
            self._connection.execute("ROLLBACK")
            raise full_disk_error()
        return self._connection.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._connection, name)


@contextmanager
def database_full(store: SQLiteStore) -> Iterator[None]:
    """No page may be added to the database file (SQLite's own SQLITE_FULL, which rolls the
    whole transaction back), until the block ends."""
    connection = store._connection
    pages = connection.execute("PRAGMA page_count").fetchone()[0]
    connection.execute(f"PRAGMA max_page_count = {pages}")
    try:
        yield
    finally:
        connection.execute("PRAGMA max_page_count = 4294967294")


BIG_ARGS = {"body": "x" * 200_000}


def test_a_commit_failing_on_a_full_disk_keeps_the_real_error_and_releases_the_lock(
    sqlite_store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    (request_id,) = pending(sqlite_store, 1)
    head = sqlite_store.audit_head_seq()
    monkeypatch.setattr(sqlite_store, "_connection", FailsLikeAFullDisk(sqlite_store._connection))

    with pytest.raises(
        StoreUnavailable, match=r"could not be committed: the disk is full \(SQLite: database"
    ):
        finishes(lambda: sqlite_store.decide(request_id, Approve(), actor="alice"))

    assert status_outside(sqlite_store, request_id) == "pending"
    assert finishes(lambda: sqlite_store.audit_head_seq()) == head  # a reader in a new thread
    decided = finishes(lambda: sqlite_store.decide(request_id, Approve(), actor="alice"))  # a writer
    assert decided.status is RequestStatus.APPROVED
    assert sqlite_store.verify_audit().ok


def test_a_write_that_fills_the_database_fails_alone_and_the_next_writes_land(
    sqlite_store: SQLiteStore,
) -> None:
    (request_id,) = pending(sqlite_store, 1)
    with database_full(sqlite_store):
        with pytest.raises(StoreUnavailable, match="the write failed: the disk is full"):
            finishes(lambda: sqlite_store.create_request(new_request(tool_call_id="big", args=BIG_ARGS)))
        assert sqlite_store.find_request("thread-1", "big") is None
    assert finishes(lambda: sqlite_store.decide(request_id, Approve(), actor="alice")).status is (
        RequestStatus.APPROVED
    )
    created, is_new = sqlite_store.create_request(new_request(tool_call_id="big", args=BIG_ARGS))
    assert is_new and created.args == BIG_ARGS
    assert sqlite_store.verify_audit().ok


def test_a_group_whose_transaction_sqlite_rolled_back_keeps_none_of_its_writes(
    sqlite_store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite undid the whole transaction, the group's earlier writes with it: the group fails,
    and so do its later writes (committing them alone would keep half of the group)."""
    first, second = pending(sqlite_store, 2)
    inserting = FailsLikeAFullDisk(sqlite_store._connection, when=lambda sql: "INSERT INTO requests" in sql)
    monkeypatch.setattr(sqlite_store, "_connection", inserting)
    errors: list[str] = []

    def group() -> None:
        with sqlite_store.grouped():
            sqlite_store.decide(first, Approve(), actor="alice")
            for call in (
                lambda: sqlite_store.create_request(new_request(tool_call_id="new")),
                lambda: sqlite_store.decide(second, Approve(), actor="alice"),
            ):
                try:
                    call()
                except StoreUnavailable as exc:
                    errors.append(exc.message)

    with pytest.raises(StoreUnavailable, match="the disk is full"):
        finishes(group)
    assert len(errors) == 2 and all("the disk is full" in message for message in errors)
    assert [status_outside(sqlite_store, request_id) for request_id in (first, second)] == ["pending"] * 2
    assert sqlite_store.find_request("thread-1", "new") is None
    assert sqlite_store.verify_audit().ok
    assert finishes(lambda: sqlite_store.decide(second, Approve(), actor="bob")).status is (
        RequestStatus.APPROVED
    )


def test_writers_sharing_a_failed_commit_all_get_the_error(
    sqlite_store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writers whose work waits in one transaction (group commit) are all told when it fails."""
    ids = pending(sqlite_store, 5)
    monkeypatch.setattr(sqlite_store, "_connection", FailsLikeAFullDisk(sqlite_store._connection))
    results: dict[str, str] = {}

    def decide(request_id: str) -> None:
        try:
            sqlite_store.decide(request_id, Approve(), actor="alice")
            results[request_id] = "approved"
        except StoreUnavailable:
            results[request_id] = "unavailable"

    def queue_writers_then_let_them_go() -> None:
        threads = [threading.Thread(target=decide, args=(request_id,)) for request_id in ids]
        with sqlite_store.grouped():  # holds the write lock: they all queue up behind it
            for thread in threads:
                thread.start()
            while sqlite_store._waiting < len(threads):
                threading.Event().wait(0.005)
        for thread in threads:  # each sees the others waiting and leaves the commit to the last
            thread.join(HANG)

    finishes(queue_writers_then_let_them_go)
    assert results == dict.fromkeys(ids, "unavailable")
    assert [status_outside(sqlite_store, request_id) for request_id in ids] == ["pending"] * 5
    assert sqlite_store.verify_audit().ok


def test_a_new_reader_does_not_wait_for_a_writer(sqlite_store: SQLiteStore) -> None:
    """A writer may hold the write lock for long (waiting for another process's lock); readers
    in threads that never read before must not queue behind it."""
    (request_id,) = pending(sqlite_store, 1)
    read_done = threading.Event()
    seen: list[RequestStatus] = []

    def read() -> None:
        seen.append(sqlite_store.get_request(request_id).status)
        read_done.set()

    def writer_holding_the_lock() -> bool:
        with sqlite_store.grouped():
            sqlite_store.decide(request_id, Approve(), actor="alice")
            threading.Thread(target=read, daemon=True).start()
            return read_done.wait(HANG)

    assert finishes(writer_holding_the_lock), "the new reader waited for the writer's lock"
    assert seen == [RequestStatus.PENDING]


def test_a_database_locked_by_another_process_is_unavailable_and_changes_nothing(
    sqlite_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_connection, "BUSY_TIMEOUT_MS", 200)
    store = SQLiteStore(sqlite_path)
    try:
        (request_id,) = pending(store, 1)
        other = sqlite3.connect(store.path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process's write transaction
        with pytest.raises(StoreUnavailable, match="locked by another connection"):
            finishes(lambda: store.decide(request_id, Approve(), actor="alice"))
        other.execute("ROLLBACK")
        other.close()
        assert finishes(lambda: store.decide(request_id, Approve(), actor="alice")).status is (
            RequestStatus.APPROVED
        )
    finally:
        store.close()


def test_other_driver_errors_are_store_errors_not_sqlite_exceptions(sqlite_store: SQLiteStore) -> None:
    (request_id,) = pending(sqlite_store, 1)
    sqlite_store.decide(request_id, Approve(), actor="alice")
    with sqlite3.connect(sqlite_store.path) as outside:
        outside.execute("DROP TABLE executions")
    with pytest.raises(StoreError, match="the write failed: no such table: executions") as raised:
        sqlite_store.claim_execution(
            request_id, args_digest=decided_digest(sqlite_store, request_id), lease=timedelta(minutes=1)
        )
    assert not isinstance(raised.value, StoreUnavailable)
    assert isinstance(raised.value.__cause__, sqlite3.Error)
    with pytest.raises(StoreError, match="the read failed: no such table: executions"):
        sqlite_store.get_execution(request_id)
    assert sqlite_store.get_request(request_id).status is RequestStatus.APPROVED  # it still reads
    assert finishes(lambda: sqlite_store.record("note", actor="test", channel="test")).seq > 0  # and writes


def test_closing_a_store_while_threads_read_ends_their_reads_with_an_error(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "tests.scripts.close_while_reading", str(tmp_path), "20"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert run.returncode == 0, f"exit {run.returncode} (-11 is a crash):\n{run.stderr[-2000:]}"
    assert run.stdout.strip() == "closed cleanly"
