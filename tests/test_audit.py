"""The audit log is append-only and hash-chained: edits and deletions are detected."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from signoff import Approve, Gate, RuleSet, Scope, Store, ToolCall
from signoff.store import SQLiteStore

RULES = RuleSet.from_yaml("tools: {refund: {requires_approval: true, redact: [card]}}")


def fill_log(store: Store, calls: int = 3) -> None:
    gate = Gate(store, rules=RULES)
    for n in range(calls):
        pending = gate.submit(
            ToolCall(name="refund", args={"n": n, "card": "4242"}, id=f"r{n}"), Scope(thread_id="a")
        )
        store.decide(pending.request_id, Approve(), actor="alice")  # type: ignore[union-attr]


def tamper(store: Store, statement: str) -> None:
    """What someone with write access to the database could do."""
    if isinstance(store, SQLiteStore):
        connection = sqlite3.connect(store.path)
        connection.execute("DROP TRIGGER IF EXISTS audit_log_no_update")
        connection.execute("DROP TRIGGER IF EXISTS audit_log_no_delete")
        connection.execute(statement)
        connection.commit()
        connection.close()
        return
    import psycopg

    from tests.conftest import url_for

    with psycopg.connect(url_for(store), autocommit=True) as connection:
        connection.execute("ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_change")
        connection.execute(statement)  # type: ignore[arg-type]


def test_an_untouched_log_verifies(store: Store) -> None:
    fill_log(store)
    report = store.verify_audit()
    assert report.ok
    assert report.entries == report.head_seq == 6


def test_redacted_args_never_reach_the_log(store: Store) -> None:
    fill_log(store, calls=1)
    text = json.dumps([entry.to_dict() for entry in store.audit_entries()])
    assert "4242" not in text
    assert '"card": "***"' in text


def test_the_log_refuses_updates_and_deletes(store: Store) -> None:
    fill_log(store, calls=1)
    if isinstance(store, SQLiteStore):
        connection = sqlite3.connect(store.path)
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            connection.execute("UPDATE audit_log SET actor = 'mallory'")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            connection.execute("DELETE FROM audit_log")
        connection.close()
    else:
        import psycopg

        from tests.conftest import url_for

        with psycopg.connect(url_for(store), autocommit=True) as connection:
            with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
                connection.execute("UPDATE audit_log SET actor = 'mallory'")
            with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
                connection.execute("DELETE FROM audit_log")
    assert store.verify_audit().ok


def test_an_edited_entry_is_detected(store: Store) -> None:
    fill_log(store)
    tamper(store, "UPDATE audit_log SET actor = 'mallory' WHERE seq = 2")
    report = store.verify_audit()
    assert not report.ok
    assert [(p.seq, p.problem) for p in report.problems] == [
        (2, "was edited: its hash does not match its contents")
    ]


def test_an_edited_payload_is_detected(store: Store) -> None:
    fill_log(store)
    column = (
        'data = \'{"type": "reject"}\''
        if isinstance(store, SQLiteStore)
        else 'data = \'{"type": "reject"}\'::json'
    )
    tamper(store, f"UPDATE audit_log SET {column} WHERE seq = 4")
    assert [p.seq for p in store.verify_audit().problems] == [4]


def test_a_deleted_entry_is_detected(store: Store) -> None:
    fill_log(store)
    tamper(store, "DELETE FROM audit_log WHERE seq = 3")
    problems = [(p.seq, p.problem) for p in store.verify_audit().problems]
    assert (4, "entries 3 are missing (deleted)") in problems
    assert (4, "does not link to the entry before it") in problems


def test_a_deleted_tail_is_detected(store: Store) -> None:
    fill_log(store)
    tamper(store, "DELETE FROM audit_log WHERE seq >= 5")
    problems = [(p.seq, p.problem) for p in store.verify_audit().problems]
    assert problems == [(5, "entries 5..6 are missing (deleted)")]


def test_export_is_the_log_in_order(sqlite_store: SQLiteStore, tmp_path: Path) -> None:
    fill_log(sqlite_store, calls=2)
    entries = [entry.to_dict() for entry in sqlite_store.audit_entries()]
    assert [entry["seq"] for entry in entries] == [1, 2, 3, 4]
    assert [entry["action"] for entry in entries] == ["request.created", "request.decided"] * 2
    assert all(entries[n]["prev_hash"] == entries[n - 1]["hash"] for n in range(1, 4))
