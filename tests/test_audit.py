"""The audit log is append-only and hash-chained: edits and deletions are detected.

The attacks of issue 8 item 21 are played one by one against a real file or database, as
someone with write access to it would: rewind the head, drop the triggers and truncate,
recompute the whole chain, drop the table, flip a rejected request to approved.
"""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from signoff import (
    Approve,
    AuditAnchor,
    AuditBroken,
    Edit,
    Gate,
    Reject,
    Respond,
    RuleSet,
    Scope,
    Store,
    ToolCall,
)
from signoff._util import canonical_json, utcnow
from signoff.audit import entry_hash, entry_payload
from signoff.requests import NewRequest
from signoff.rules.model import RequestRule
from signoff.store import SQLiteStore
from tests.conftest import url_for

RULES = RuleSet.from_yaml("tools: {refund: {requires_approval: true, redact: [card]}}")
Statement = str | tuple[str, dict[str, Any]]
PG_AUDIT_TABLES = ("audit_log", "audit_head", "audit_seals", "audit_purges")


def fill_log(store: Store, calls: int = 3, thread: str = "a") -> list[str]:
    """`calls` refunds, each asked and approved: entries 2n-1 (created) and 2n (decided)."""
    gate = Gate(store, rules=RULES)
    ids = []
    for n in range(calls):
        pending = gate.submit(
            ToolCall(name="refund", args={"n": n, "card": "4242"}, id=f"r{n}"), Scope(thread_id=thread)
        )
        store.decide(pending.request_id, Approve(), actor="alice")  # type: ignore[union-attr]
        ids.append(pending.request_id)  # type: ignore[union-attr]
    store.seal_audit()  # PostgreSQL queues entries until sealed: the attacks below are on the chain
    return ids


def is_pg(store: Store) -> bool:
    return not isinstance(store, SQLiteStore)


def as_json(store: Store, param: str) -> str:
    """`:param` as a JSON column value in this dialect."""
    return f"CAST(:{param} AS json)" if is_pg(store) else f":{param}"


def tamper(store: Store, *statements: Statement, guards_back: bool = True) -> None:
    """What someone with write access to the database could do: take the guarding triggers off,
    run `statements` (`:name` parameters), and (with `guards_back`) put the triggers back."""
    if isinstance(store, SQLiteStore):
        connection = sqlite3.connect(store.path, isolation_level=None)
        triggers = connection.execute(
            "SELECT name, sql FROM sqlite_master "
            "WHERE type = 'trigger' AND tbl_name IN ('audit_log', 'audit_head', 'audit_purges')"
        ).fetchall()
        for name, _ in triggers:
            connection.execute(f"DROP TRIGGER {name}")
        for statement in statements:
            sql, params = (statement, {}) if isinstance(statement, str) else statement
            connection.execute(sql, params)
        if guards_back:
            for _, sql in triggers:
                connection.execute(sql)
        connection.close()
        return
    import psycopg

    with psycopg.connect(url_for(store), autocommit=True) as connection:
        for table in PG_AUDIT_TABLES:
            connection.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")  # type: ignore[arg-type]
        for statement in statements:
            sql, params = (statement, {}) if isinstance(statement, str) else statement
            connection.execute(re.sub(r"(?<![:\w]):([A-Za-z_]\w*)", r"%(\1)s", sql), params)  # type: ignore[call-overload]
        if guards_back:
            for table in PG_AUDIT_TABLES:
                connection.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")  # type: ignore[arg-type]


def run_sql(store: Store, statement: str) -> None:
    """One statement, guards left as they are: raises what the database raises."""
    if isinstance(store, SQLiteStore):
        connection = sqlite3.connect(store.path, isolation_level=None)
        try:
            connection.execute(statement)
        finally:
            connection.close()
        return
    import psycopg

    with psycopg.connect(url_for(store), autocommit=True) as connection:
        connection.execute(statement)  # type: ignore[arg-type]


def refused(store: Store) -> type[Exception]:
    if is_pg(store):
        import psycopg

        return psycopg.errors.RaiseException
    return sqlite3.IntegrityError


def problems(store: Store, anchor: AuditAnchor | None = None) -> list[tuple[int, str]]:
    return [(p.seq, p.problem) for p in store.verify_audit(anchor=anchor).problems]


# -- an honest log ------------------------------------------------------------------------------


def test_an_untouched_log_verifies(store: Store) -> None:
    fill_log(store)
    report = store.verify_audit()
    assert report.ok, report.problems
    assert report.entries == report.head_seq == 6
    assert report.requests == 3


def test_every_way_a_request_ends_verifies(store: Store) -> None:
    """No false alarms: every ending, redacted args, a quorum, a draft and an open request."""
    soon = utcnow() + timedelta(hours=1)

    def ask(call: str, **fields: Any) -> str:
        values: dict[str, Any] = {
            "thread_id": "t",
            "tool_call_id": call,
            "tool_name": "pay",
            "args": {"to": "bob", "card": "4242", "cents": 5},
            "description": "pay bob",
            "deadline": soon,
            "rule": RequestRule(redact=("card",)),
        }
        values.update(fields)
        return store.create_request(NewRequest(**values))[0].id

    store.decide(ask("approve"), Approve(comment="fine"), actor="alice")
    store.decide(ask("edit"), Edit(args={"to": "bob", "card": "5555", "cents": 4}), actor="alice")
    store.decide(ask("reject"), Reject(message="no"), actor="bob")
    store.decide(ask("respond"), Respond(message="done by hand"), actor="bob")
    store.cancel(ask("cancel"), actor="agent", reason="run aborted")
    ask("expired", deadline=utcnow() - timedelta(seconds=1))
    store.expire_due()
    quorum = ask("quorum", rule=RequestRule(quorum=2))
    store.decide(quorum, Approve(), actor="alice")
    store.decide(quorum, Approve(), actor="bob")
    draft = ask("draft", drafting=True, args={"to": "b"})
    store.update_draft(draft, args={"to": "bob", "cents": 5}, ready=True)
    store.decide(draft, Approve(), actor="alice")
    ask("open")
    report = store.verify_audit()
    assert report.ok, report.problems
    assert report.requests == 9


def test_redacted_args_never_reach_the_log(store: Store) -> None:
    fill_log(store, calls=1)
    text = json.dumps([entry.to_dict() for entry in store.audit_entries()])
    assert "4242" not in text
    assert '"card": "***"' in text


def test_export_is_the_log_in_order(sqlite_store: SQLiteStore, tmp_path: Path) -> None:
    fill_log(sqlite_store, calls=2)
    entries = [entry.to_dict() for entry in sqlite_store.audit_entries()]
    assert [entry["seq"] for entry in entries] == [1, 2, 3, 4]
    assert [entry["action"] for entry in entries] == ["request.created", "request.decided"] * 2
    assert all(entries[n]["prev_hash"] == entries[n - 1]["hash"] for n in range(1, 4))


# -- the guards ---------------------------------------------------------------------------------


def test_the_log_refuses_updates_and_deletes(store: Store) -> None:
    fill_log(store, calls=1)
    for statement in ("UPDATE audit_log SET actor = 'mallory'", "DELETE FROM audit_log"):
        with pytest.raises(refused(store), match="append-only"):
            run_sql(store, statement)
    assert store.verify_audit().ok


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE audit_head SET seq = 2, hash = (SELECT hash FROM audit_log WHERE seq = 2)",
        "UPDATE audit_head SET seq = 0, hash = ''",
        "UPDATE audit_head SET seq = 7, hash = 'forged'",
        "DELETE FROM audit_head",
        "INSERT INTO audit_head (id, seq, hash) VALUES (2, 0, '')",
    ],
)
def test_the_head_moves_only_as_the_log_grows(store: Store, statement: str) -> None:
    fill_log(store, calls=2)
    with pytest.raises(refused(store), match="audit_head moves only as audit_log grows"):
        run_sql(store, statement)
    assert store.audit_head_seq() == 4
    assert store.verify_audit().ok


def test_sqlite_insert_or_replace_cannot_reset_the_head(sqlite_store: SQLiteStore) -> None:
    """REPLACE deletes the old row without firing delete triggers; the insert trigger stops it."""
    fill_log(sqlite_store, calls=1)
    with pytest.raises(sqlite3.IntegrityError, match="audit_head moves only"):
        run_sql(sqlite_store, "INSERT OR REPLACE INTO audit_head (id, seq, hash) VALUES (1, 0, '')")
    assert sqlite_store.audit_head_seq() == 2


@pytest.mark.postgres
@pytest.mark.parametrize("table", ["audit_log", "audit_head"])
def test_postgres_refuses_truncate(pg_store: Store, table: str) -> None:
    """TRUNCATE skips row triggers; a statement trigger refuses it."""
    fill_log(pg_store, calls=1)
    with pytest.raises(refused(pg_store)):
        run_sql(pg_store, f"TRUNCATE {table}")
    assert pg_store.verify_audit().ok


def test_missing_or_disabled_triggers_are_reported(store: Store) -> None:
    fill_log(store, calls=1)
    tamper(store, guards_back=False)
    found = problems(store)
    state = "disabled" if is_pg(store) else "missing"
    expected = (
        ["audit_log_moves_head", "audit_log_no_change", "audit_log_no_truncate", "audit_head_guard"]
        if is_pg(store)
        else [
            "audit_log_moves_head",
            "audit_log_no_update",
            "audit_log_no_delete",
            "audit_head_moves_forward",
        ]
    )
    for trigger in expected:
        assert (
            0,
            f"the trigger {trigger} is {state}: the log is no longer protected against rewriting",
        ) in found


def test_verify_names_every_guarding_trigger_the_schema_creates(store: Store) -> None:
    """The guards verify checks are all the triggers schema.sql puts on the audit tables."""
    from signoff.store.queries import sql_file

    dialect = "postgres" if is_pg(store) else "sqlite"
    created = set(re.findall(r"CREATE TRIGGER (\w+) .*?ON (audit_\w+)", sql_file(dialect, "schema.sql")))
    fill_log(store, calls=1)
    tamper(store, guards_back=False)
    reported = {
        match.group(1)
        for _, problem in problems(store)
        if (match := re.match(r"the trigger (\w+) is", problem))
    }
    assert {name for name, _ in created} == reported


# -- the attacks, one by one --------------------------------------------------------------------


def test_an_edited_entry_is_detected(store: Store) -> None:
    fill_log(store)
    tamper(store, "UPDATE audit_log SET actor = 'mallory' WHERE seq = 2")
    assert (2, "was edited: its hash does not match its contents") in problems(store)
    assert all(seq == 2 for seq, _ in problems(store))


def test_an_edited_payload_is_detected(store: Store) -> None:
    fill_log(store)
    tamper(
        store,
        (
            f"UPDATE audit_log SET data = {as_json(store, 'data')} WHERE seq = 4",
            {"data": '{"type": "reject"}'},
        ),
    )
    found = problems(store)
    assert (4, "was edited: its hash does not match its contents") in found
    assert {seq for seq, _ in found} == {4}


def test_a_deleted_entry_is_detected(store: Store) -> None:
    fill_log(store)
    tamper(store, "DELETE FROM audit_log WHERE seq = 3")
    found = problems(store)
    assert (4, "entries 3 are missing (deleted)") in found
    assert (4, "does not link to the entry before it") in found


def test_a_deleted_tail_is_detected(store: Store) -> None:
    fill_log(store)
    tamper(store, "DELETE FROM audit_log WHERE seq >= 5")
    assert (5, "entries 5..6 are missing (deleted)") in problems(store)


def test_a_rewound_head_is_detected(store: Store) -> None:
    """The head set back to entry 4, entries 5 and 6 left in place: verify used to stop at the head."""
    fill_log(store)
    anchor = store.audit_anchor()
    tamper(store, "UPDATE audit_head SET seq = 4, hash = (SELECT hash FROM audit_log WHERE seq = 4)")
    assert problems(store) == [(5, "entries 5..6 lie beyond the recorded head 4: the head was moved back")]
    assert (
        6,
        "the anchored entry 6 is gone: the log was cut back or rewound after it was anchored "
        "(it now ends at 4)",
    ) in problems(store, anchor)
    with pytest.raises(AuditBroken, match="does not end at its recorded head"):
        store.audit_anchor()


def test_a_rewound_and_cut_log_is_caught_by_the_anchor_and_the_requests(store: Store) -> None:
    """Entries 5 and 6 deleted and the head set back: the chain itself is consistent again."""
    ids = fill_log(store)
    anchor = store.audit_anchor()
    tamper(
        store,
        "DELETE FROM audit_log WHERE seq >= 5",
        "UPDATE audit_head SET seq = 4, hash = (SELECT hash FROM audit_log WHERE seq = 4)",
    )
    found = problems(store)
    assert (0, f"request {ids[2]} has no audit entry recording its creation") in found
    assert (0, f"request {ids[2]} is approved, but no audit entry records how it ended") in found
    assert [seq for seq, _ in problems(store, anchor) if seq == 6]


def test_dropping_the_triggers_and_truncating_is_detected(store: Store) -> None:
    ids = fill_log(store)
    anchor = store.audit_anchor()
    tamper(store, "DELETE FROM audit_log", "UPDATE audit_head SET seq = 0, hash = ''")
    report = store.verify_audit(anchor=anchor)
    assert not report.ok
    assert report.entries == 0
    found = [(p.seq, p.problem) for p in report.problems]
    assert (
        6,
        "the anchored entry 6 is gone: the log was cut back or rewound after it was anchored "
        "(it now ends at 0)",
    ) in found
    for request_id in ids:
        assert (0, f"request {request_id} is approved, but no audit entry records how it ended") in found


def recompute_chain(store: Store, edit: dict[int, dict[str, Any]]) -> list[Statement]:
    """Statements that rewrite entries' data (`edit`: seq -> new data) and every hash from there on,
    and the head: a chain that verifies on its own."""
    entries = list(store.audit_entries())
    statements: list[Statement] = []
    prev_hash = ""
    for entry in entries:
        data = edit.get(entry.seq, entry.data)
        payload = entry_payload(
            at=entry.at,
            actor=entry.actor,
            channel=entry.channel,
            action=entry.action,
            request_id=entry.request_id,
            data_text=canonical_json(data),
        )
        digest = entry_hash(seq=entry.seq, prev_hash=prev_hash, payload=payload)
        statements.append(
            (
                f"UPDATE audit_log SET data = {as_json(store, 'data')}, prev_hash = :prev, hash = :hash "
                "WHERE seq = :seq",
                {"data": json.dumps(data), "prev": prev_hash, "hash": digest, "seq": entry.seq},
            )
        )
        prev_hash = digest
    statements.append(("UPDATE audit_head SET hash = :hash", {"hash": prev_hash}))
    return statements


def test_a_recomputed_chain_is_caught_by_the_anchor(store: Store) -> None:
    """Request 2's approval rewritten as a rejection, in the log and in requests alike, every hash
    recomputed: only the anchor kept elsewhere can tell."""
    ids = fill_log(store)
    anchor = store.audit_anchor()
    [decided] = [e for e in store.audit_entries(request_id=ids[1]) if e.action == "request.decided"]
    rejection = {"type": "reject", "original_args": decided.data["original_args"]}
    stored = {
        "type": "reject",
        "id": "dec_x",
        "actor": "alice",
        "channel": "api",
        "at": "2024-01-01T00:00:00Z",
    }
    tamper(
        store,
        *recompute_chain(store, {decided.seq: rejection}),
        (
            f"UPDATE requests SET status = 'rejected', final_args = NULL, decision = {as_json(store, 'd')} "
            "WHERE id = :id",
            {"d": json.dumps(stored), "id": ids[1]},
        ),
    )
    assert store.verify_audit().ok, "a consistent rewrite passes without an anchor"
    found = problems(store, anchor)
    assert (
        anchor.seq,
        f"does not match the anchor {anchor}: the log was rewritten after it was anchored",
    ) in found


def test_a_dropped_table_is_a_clear_problem_not_a_crash(store: Store) -> None:
    fill_log(store, calls=1)
    run_sql(store, "DROP TABLE audit_log")
    report = store.verify_audit()
    assert not report.ok
    assert (0, "the table audit_log is missing: it was dropped, or never created") in [
        (p.seq, p.problem) for p in report.problems
    ]
    with pytest.raises(AuditBroken, match="the table audit_log is missing"):
        store.audit_anchor()


def test_a_request_flipped_from_rejected_to_approved_is_detected(store: Store) -> None:
    gate = Gate(store, rules=RULES)
    pending = gate.submit(
        ToolCall(name="refund", args={"n": 1, "card": "4242"}, id="x"), Scope(thread_id="a")
    )
    request_id = pending.request_id  # type: ignore[union-attr]
    store.decide(request_id, Reject(message="too much"), actor="alice")
    approval = {
        "type": "approve",
        "id": "dec_x",
        "actor": "alice",
        "channel": "api",
        "at": "2024-01-01T00:00:00Z",
    }
    tamper(
        store,
        (
            f"UPDATE requests SET status = 'approved', final_args = args, decision = {as_json(store, 'd')} "
            "WHERE id = :id",
            {"d": json.dumps(approval), "id": request_id},
        ),
    )
    assert problems(store) == [
        (2, f"request {request_id} is approved in the requests table, but this entry recorded it rejected")
    ]


def test_changed_final_args_are_detected(store: Store) -> None:
    [request_id] = fill_log(store, calls=1)
    tamper(
        store,
        (
            f"UPDATE requests SET final_args = {as_json(store, 'args')} WHERE id = :id",
            {"args": json.dumps({"n": 1000, "card": "4242"}), "id": request_id},
        ),
    )
    assert problems(store) == [
        (
            2,
            f"request {request_id}: its final args in the requests table differ from those this "
            "entry recorded",
        )
    ]


def test_a_changed_decider_is_detected(store: Store) -> None:
    [request_id] = fill_log(store, calls=1)
    decision = store.get_request(request_id).resolution
    assert decision is not None
    tamper(
        store,
        (
            f"UPDATE requests SET decision = {as_json(store, 'd')} WHERE id = :id",
            {"d": json.dumps({**decision, "actor": "mallory"}), "id": request_id},
        ),
    )
    assert problems(store) == [
        (2, f"request {request_id}: the requests table says 'mallory' ended it, this entry says 'alice'")
    ]


def test_changed_pending_args_are_detected(store: Store) -> None:
    gate = Gate(store, rules=RULES)
    pending = gate.submit(
        ToolCall(name="refund", args={"n": 1, "card": "4242"}, id="x"), Scope(thread_id="a")
    )
    request_id = pending.request_id  # type: ignore[union-attr]
    tamper(
        store,
        (
            f"UPDATE requests SET args = {as_json(store, 'args')} WHERE id = :id",
            {"args": json.dumps({"n": 1000, "card": "4242"}), "id": request_id},
        ),
    )
    assert problems(store) == [
        (1, f"request {request_id}: its args in the requests table differ from those this entry recorded")
    ]


def test_a_deleted_request_is_detected(store: Store) -> None:
    ids = fill_log(store, calls=2)
    tamper(store, ("DELETE FROM requests WHERE id = :id", {"id": ids[0]}))
    assert problems(store) == [(1, f"request {ids[0]} was created, but the requests table no longer has it")]


# -- anchors ------------------------------------------------------------------------------------


def test_an_anchor_is_extended_by_later_entries(store: Store) -> None:
    assert str(store.audit_anchor()) == "0:"
    fill_log(store, calls=1)
    anchor = store.audit_anchor()
    assert anchor.seq == 2 and len(anchor.hash) == 64
    fill_log(store, calls=2, thread="b")
    report = store.verify_audit(anchor=AuditAnchor.parse(str(anchor)))
    assert report.ok, report.problems
    assert report.anchor == anchor


def test_a_wrong_anchor_is_reported(store: Store) -> None:
    fill_log(store, calls=1)
    wrong = AuditAnchor(2, "0" * 64)
    assert problems(store, wrong) == [
        (2, f"does not match the anchor {wrong}: the log was rewritten after it was anchored")
    ]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "12",
        "x:" + "a" * 64,
        "3:" + "a" * 63,
        "3:" + "A" * 64,
        "3:",
        "0:" + "a" * 64,
        "-1:",
        "99999999999999999999:" + "a" * 64,
    ],
)
def test_a_malformed_anchor_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not an audit anchor"):
        AuditAnchor.parse(text)
