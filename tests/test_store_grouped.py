"""`store.grouped()`: writes that share one commit (SQLite), and `on_commit` callbacks."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable

import pytest

from signoff import AlreadyDecided, Approve, Reject, RequestStatus, StoreError
from signoff.store import SQLiteStore, Store

from .test_store_requests import new_request


def status_outside(store: SQLiteStore, request_id: str) -> str | None:
    """The status another connection (another process) sees."""
    with sqlite3.connect(store.path) as outside:
        row = outside.execute("SELECT status FROM requests WHERE id = ?", (request_id,)).fetchone()
    return row[0] if row else None


def fail_at_commit(store: SQLiteStore) -> None:
    """Make the open transaction's COMMIT fail: a foreign key that is checked only then."""
    store._connection.execute("PRAGMA defer_foreign_keys = ON")
    store._connection.execute("INSERT INTO request_approvers (request_id, principal) VALUES ('none', 'x')")


def pending(store: Store, count: int) -> list[str]:
    return [store.create_request(new_request(tool_call_id=f"c{n}"))[0].id for n in range(count)]


def test_writes_in_a_group_share_one_commit_and_are_seen_only_after_it(sqlite_store: SQLiteStore) -> None:
    ids = pending(sqlite_store, 5)
    before = sqlite_store.commits
    with sqlite_store.grouped():
        for request_id in ids:
            decided = sqlite_store.decide(request_id, Approve(), actor="alice")
            assert decided.status is RequestStatus.APPROVED
            assert sqlite_store.get_request(request_id).status is RequestStatus.APPROVED  # its own writes
            assert status_outside(sqlite_store, request_id) == "pending"  # not committed yet
    assert sqlite_store.commits - before == 1
    assert [status_outside(sqlite_store, request_id) for request_id in ids] == ["approved"] * 5
    assert sqlite_store.verify_audit().ok


def test_a_refused_write_in_a_group_changes_nothing_and_the_others_land(sqlite_store: SQLiteStore) -> None:
    first, second = pending(sqlite_store, 2)
    with sqlite_store.grouped():
        sqlite_store.decide(first, Approve(), actor="alice")
        with pytest.raises(AlreadyDecided, match="already approved by alice"):
            sqlite_store.decide(first, Reject(message="no"), actor="bob")  # sees the group's own write
        sqlite_store.decide(second, Reject(message="not now"), actor="bob")
    assert sqlite_store.get_request(first).decision is not None
    assert sqlite_store.get_request(first).decision.actor == "alice"  # type: ignore[union-attr]
    assert sqlite_store.get_request(second).status is RequestStatus.REJECTED
    decided = [entry for entry in sqlite_store.audit_entries() if entry.action == "request.decided"]
    assert [entry.request_id for entry in decided] == [first, second]


def test_waiters_and_on_commit_callbacks_run_only_after_the_commit(
    sqlite_store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    (request_id,) = pending(sqlite_store, 1)
    woken: list[tuple[list[str], str | None]] = []
    fire = sqlite_store.hub.fire

    def record_fire(ids: Iterable[str]) -> None:
        ids = list(ids)
        woken.append((ids, status_outside(sqlite_store, request_id)))
        fire(ids)

    monkeypatch.setattr(sqlite_store.hub, "fire", record_fire)
    called: list[str | None] = []
    with sqlite_store.grouped():
        sqlite_store.decide(request_id, Approve(), actor="alice")
        sqlite_store.on_commit(lambda: called.append(status_outside(sqlite_store, request_id)))
        assert woken == [] and called == []
    assert woken == [([request_id], "approved")]
    assert called == ["approved"]
    sqlite_store.on_commit(lambda: called.append("now"))  # outside a group: at once
    assert called == ["approved", "now"]


def test_a_failed_group_commit_raises_and_keeps_none_of_its_writes(sqlite_store: SQLiteStore) -> None:
    first, second = pending(sqlite_store, 2)
    called: list[str] = []

    def group_whose_commit_fails() -> None:
        with sqlite_store.grouped():
            sqlite_store.decide(first, Approve(), actor="alice")
            sqlite_store.on_commit(lambda: called.append("committed"))
            fail_at_commit(sqlite_store)

    with pytest.raises(StoreError, match="could not be committed"):
        group_whose_commit_fails()
    assert called == []
    assert [status_outside(sqlite_store, request_id) for request_id in (first, second)] == ["pending"] * 2
    assert sqlite_store.decide(second, Approve(), actor="alice").status is RequestStatus.APPROVED
    assert sqlite_store.verify_audit().ok


def test_other_threads_write_after_the_group_and_commit_on_their_own(sqlite_store: SQLiteStore) -> None:
    inside, outside = pending(sqlite_store, 2)
    finished = threading.Event()

    def other_writer() -> None:
        sqlite_store.decide(outside, Approve(), actor="bob")
        finished.set()

    with sqlite_store.grouped():
        sqlite_store.decide(inside, Approve(), actor="alice")
        thread = threading.Thread(target=other_writer)
        thread.start()
        assert not finished.wait(0.1)  # it waits for the group's write lock
        with sqlite_store.grouped():  # nested: part of the same group
            assert sqlite_store.get_request(inside).status is RequestStatus.APPROVED
    thread.join(10)
    assert finished.is_set()
    assert status_outside(sqlite_store, outside) == "approved"
    assert status_outside(sqlite_store, inside) == "approved"


def test_other_backends_commit_each_write_on_its_own(store: Store) -> None:
    """Where writes cannot share a commit (PostgreSQL), `grouped()` changes nothing."""
    (request_id,) = pending(store, 1)
    called: list[RequestStatus] = []
    with store.grouped():
        store.decide(request_id, Approve(), actor="alice")
        store.on_commit(lambda: called.append(store.get_request(request_id).status))
        if not store.groups_writes:
            assert called == [RequestStatus.APPROVED]
    assert called == [RequestStatus.APPROVED]


@pytest.mark.parametrize("first_in_its_transaction", [True, False])
def test_a_write_that_fails_partway_is_undone_alone(
    sqlite_store: SQLiteStore, first_in_its_transaction: bool
) -> None:
    """The transaction's first write has no savepoint (rolling back undoes it), a later one has:
    either way its own changes go, and the group's other writes land."""
    doomed, other = pending(sqlite_store, 2)
    with sqlite3.connect(sqlite_store.path) as outside:  # its decision is written, then its entry refused
        outside.execute(
            "CREATE TRIGGER refuse_one BEFORE INSERT ON audit_log WHEN NEW.action = 'request.decided' "
            f"AND NEW.request_id = '{doomed}' BEGIN SELECT RAISE(ABORT, 'refused on purpose'); END"
        )
    with sqlite_store.grouped():
        if not first_in_its_transaction:
            sqlite_store.decide(other, Approve(), actor="alice")
        with pytest.raises(StoreError, match="refused on purpose"):
            sqlite_store.decide(doomed, Approve(), actor="alice")
        if first_in_its_transaction:
            sqlite_store.decide(other, Approve(), actor="alice")
    assert status_outside(sqlite_store, doomed) == "pending"
    assert status_outside(sqlite_store, other) == "approved"
    assert sqlite_store.verify_audit().ok
