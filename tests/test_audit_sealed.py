"""The sealed audit log (DESIGN §11): PostgreSQL writes queue their entries without locking the
audit head; one sealer at a time chains them. SQLite seals each entry as it commits. One contract,
both behaviours."""

from __future__ import annotations

import threading
from typing import Any

import psycopg
import pytest

from signoff import Approve, Gate, RuleSet, Scope, Store, ToolCall
from signoff.store import SQLiteStore
from signoff.store.postgres import PostgresStore
from tests.conftest import POSTGRES_DSN, url_for
from tests.live import LiveServer
from tests.served import eventually

RULES = RuleSet.from_yaml("tools: {refund: {requires_approval: true}}")


def ask_and_approve(store: Store, n: int, thread: str = "t") -> str:
    pending = Gate(store, rules=RULES).submit(
        ToolCall(name="refund", args={"n": n}, id=f"c{n}"), Scope(thread_id=thread)
    )
    store.decide(pending.request_id, Approve(), actor="alice")  # type: ignore[union-attr]
    return pending.request_id  # type: ignore[union-attr]


def raw(store: Store) -> psycopg.Connection[Any]:
    return psycopg.connect(url_for(store), autocommit=True)


def chain_length(store: Store) -> int:
    with raw(store) as connection:
        row = connection.execute("SELECT count(*) FROM audit_log").fetchone()
    assert row is not None
    return int(row[0])


def test_sqlite_seals_each_entry_as_it_commits(sqlite_store: SQLiteStore) -> None:
    ask_and_approve(sqlite_store, 1)
    assert sqlite_store.audit_unsealed() == (0, None)
    assert sqlite_store.seal_audit() == 0
    report = sqlite_store.verify_audit(seal=False)
    assert report.ok and report.entries == 2 and report.unsealed == 0 and report.requests == 1


def test_postgres_writes_queue_their_entries_until_sealed(pg_store: Store) -> None:
    request_id = ask_and_approve(pg_store, 1)
    assert chain_length(pg_store) == 0
    unsealed, since = pg_store.audit_unsealed()
    assert unsealed == 2 and since is not None

    report = pg_store.verify_audit(seal=False)
    assert report.ok, report.problems
    assert (report.entries, report.unsealed, report.requests_unsealed) == (0, 2, 1)

    assert pg_store.seal_audit() == 2
    assert pg_store.audit_unsealed() == (0, None)
    report = pg_store.verify_audit(seal=False)
    assert report.ok and (report.entries, report.head_seq, report.unsealed, report.requests) == (2, 2, 0, 1)
    assert [entry.action for entry in pg_store.audit_entries(request_id=request_id)] == [
        "request.created",
        "request.decided",
    ]


def test_a_reader_sees_what_was_written_before_it_asked(pg_store: Store) -> None:
    request_id = ask_and_approve(pg_store, 1)
    assert [entry.action for entry in pg_store.audit_entries(request_id=request_id)] == [
        "request.created",
        "request.decided",
    ]
    assert pg_store.audit_unsealed() == (0, None)
    assert pg_store.audit_head_seq() == 2


def test_entries_recorded_directly_come_after_what_was_queued_before(pg_store: Store) -> None:
    ask_and_approve(pg_store, 1)
    entry = pg_store.record("server.started", actor="signoff", channel="server")
    assert entry.seq == 3 and entry.prev_hash and entry.hash
    assert [e.action for e in pg_store.audit_entries()] == [
        "request.created",
        "request.decided",
        "server.started",
    ]


def test_writers_never_wait_for_the_audit_head(pg_store: Store) -> None:
    """With the head row locked (a sealer mid-batch, or anyone), requests are still asked and
    decided: the head-row lock no longer serialises writers."""
    with raw(pg_store) as holder:
        holder.execute("BEGIN")
        holder.execute("SELECT * FROM audit_head WHERE id = 1 FOR UPDATE")
        done: list[str] = []
        writer = threading.Thread(target=lambda: done.append(ask_and_approve(pg_store, 7)), daemon=True)
        writer.start()
        writer.join(30)
        assert done, "a write waited for the audit head's lock"
        assert pg_store.seal_audit(wait=False) == -1  # another holds the head: skip this turn
        holder.execute("ROLLBACK")
    assert pg_store.seal_audit(wait=False) == 2
    assert pg_store.verify_audit().ok


def test_racing_writers_and_sealers_seal_every_entry_exactly_once(pg_store: Store) -> None:
    writers, per_writer = 4, 10
    stop = threading.Event()
    failures: list[BaseException] = []

    def write(w: int) -> None:
        try:
            for n in range(per_writer):
                ask_and_approve(pg_store, n, thread=f"w{w}")
        except BaseException as exc:  # pragma: no cover - reported below
            failures.append(exc)

    def seal() -> None:
        while not stop.is_set():
            try:
                pg_store.seal_audit(wait=False)
            except BaseException as exc:  # pragma: no cover - reported below
                failures.append(exc)
                return

    sealers = [threading.Thread(target=seal, daemon=True) for _ in range(2)]
    threads = [threading.Thread(target=write, args=(w,), daemon=True) for w in range(writers)]
    for thread in [*sealers, *threads]:
        thread.start()
    for thread in threads:
        thread.join(120)
    stop.set()
    for thread in sealers:
        thread.join(30)
    assert not failures, failures
    pg_store.seal_audit()
    expected = writers * per_writer * 2
    assert chain_length(pg_store) == expected
    report = pg_store.verify_audit(seal=False)
    assert report.ok, report.problems
    assert (report.entries, report.head_seq, report.unsealed, report.requests) == (
        expected,
        expected,
        0,
        writers * per_writer,
    )
    with raw(pg_store) as connection:
        seals = connection.execute(
            "SELECT first_seq, head_seq, entries FROM audit_seals ORDER BY head_seq"
        ).fetchall()
    assert sum(row[2] for row in seals) == expected
    assert all(row[1] - row[0] + 1 == row[2] for row in seals)
    assert [row[0] for row in seals] == [1, *(row[1] + 1 for row in seals[:-1])]


def test_a_write_that_rolls_back_leaves_nothing_to_seal(pg_store: Store) -> None:
    from signoff.store.core import AuditNote

    def failing_write() -> None:
        with pg_store._write() as tx:
            tx.send("queue_audit", **AuditNote("custom.note", "alice", "test").params())
            raise RuntimeError("the change failed after its entry was queued")

    with pytest.raises(RuntimeError):
        failing_write()
    assert pg_store.audit_unsealed() == (0, None)
    ask_and_approve(pg_store, 1)
    assert pg_store.verify_audit().ok and pg_store.audit_head_seq() == 2


def test_entries_left_queued_by_a_stopped_process_are_sealed_by_the_next(pg_store: Store) -> None:
    assert POSTGRES_DSN is not None
    other = PostgresStore(POSTGRES_DSN, schema=pg_store.schema, max_size=2)  # type: ignore[attr-defined]
    ask_and_approve(other, 1)
    other.close()  # gone before anything sealed its entries
    assert pg_store.audit_unsealed()[0] == 2
    report = pg_store.verify_audit()
    assert report.ok and report.entries == 2 and report.unsealed == 0


def test_the_sealed_tables_refuse_rewriting(pg_store: Store) -> None:
    ask_and_approve(pg_store, 1)
    pg_store.seal_audit()
    for statement in ("UPDATE audit_seals SET entries = 0", "DELETE FROM audit_seals"):
        with (
            raw(pg_store) as connection,
            pytest.raises(psycopg.errors.RaiseException, match="audit_seals is append-only"),
        ):
            connection.execute(statement)  # type: ignore[arg-type]


def test_an_anchor_is_a_sealed_head_and_later_writes_extend_it(pg_store: Store) -> None:
    ask_and_approve(pg_store, 1)
    anchor = pg_store.audit_anchor()
    assert anchor.seq == 2
    ask_and_approve(pg_store, 2)
    report = pg_store.verify_audit(anchor=anchor)
    assert report.ok and report.entries == 4


def test_the_server_seals_what_no_reader_asks_for(pg_store: Store) -> None:
    """Rule changes wake no event feed: only the server's sealer chains them, within its interval."""
    assert POSTGRES_DSN is not None
    with LiveServer(pg_store) as server:
        writer = PostgresStore(POSTGRES_DSN, schema=pg_store.schema, max_size=2)  # type: ignore[attr-defined]
        try:
            for n in range(5):
                writer.set_layer("tool", f"tool{n}", {"requires_approval": True}, actor="alice")
        finally:
            writer.close()
        eventually(lambda: chain_length(pg_store) >= 5, timeout=20)
        with server.client() as client:
            metrics = client.get("/metrics").text
    assert "signoff_audit_unsealed " in metrics and "signoff_audit_unsealed_age_seconds " in metrics
    assert pg_store.verify_audit(seal=False).ok


def test_the_cli_seals_and_verifies_a_postgres_log(pg_store: Store) -> None:
    from typer.testing import CliRunner

    from signoff.cli.app import app

    ask_and_approve(pg_store, 1)
    runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None})
    sealed = runner.invoke(app, ["--db", url_for(pg_store), "audit", "seal"])
    assert sealed.exit_code == 0, sealed.output
    assert sealed.stdout.strip() == "sealed 2 entries"
    assert (
        runner.invoke(app, ["--db", url_for(pg_store), "audit", "seal"]).stdout.strip() == "sealed 0 entries"
    )
    ask_and_approve(pg_store, 2)
    verified = runner.invoke(app, ["--db", url_for(pg_store), "audit", "verify"])
    assert verified.exit_code == 0, verified.output
    assert verified.stdout.strip() == "ok, 4 entries, 2 requests"


def test_the_cli_refuses_to_seal_a_server_s_log(pg_store: Store) -> None:
    from typer.testing import CliRunner

    from signoff.cli.app import app

    result = CliRunner(env={"SIGNOFF_URL": "http://127.0.0.1:9", "SIGNOFF_TOKEN": "x"}).invoke(
        app, ["audit", "seal"]
    )
    assert result.exit_code != 0
    assert "works on a local database only" in result.output
