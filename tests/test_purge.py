"""Retention: `purge(before)` drops what closed before a cutoff, exports the audit entries it
drops first, and leaves the log verifiable, from an anchor taken before the purge too (given
the export). Played on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from signoff import Approve, AuditAnchor, Reject, Store
from signoff._util import utcnow
from signoff.errors import InvalidInput
from signoff.requests import NewRequest
from signoff.store import open_store
from signoff.store.idempotency_ops import KeptAnswer
from signoff.store.outbox_ops import Outcome
from signoff.store.purge_ops import PurgeOps
from tests.conftest import url_for
from tests.helpers import decided_digest
from tests.test_audit import is_pg, refused, run_sql


def ask(store: Store, call: str, thread: str = "t") -> str:
    request, _ = store.create_request(
        NewRequest(
            thread_id=thread,
            tool_call_id=call,
            tool_name="refund",
            args={"call": call},
            description="Refund",
            deadline=utcnow() + timedelta(hours=1),
        )
    )
    return request.id


def closed(store: Store, calls: int, thread: str = "t") -> list[str]:
    """`calls` requests, each decided (approvals and rejections)."""
    ids = []
    for n in range(calls):
        request_id = ask(store, f"{thread}{n}", thread)
        store.decide(request_id, Approve() if n % 2 == 0 else Reject(), actor="alice")
        ids.append(request_id)
    return ids


def executed(store: Store, request_id: str) -> None:
    claim = store.claim_execution(
        request_id, args_digest=decided_digest(store, request_id), lease=timedelta(minutes=1)
    )
    assert claim.token is not None
    store.finish_execution(request_id, claim.token, succeeded=True, result={"ok": True})


def deliver_all(store: Store) -> int:
    sent = Outcome(state="sent", result="sent", target="x", next_at=utcnow())
    rows = store.claim_outbox("worker", lease=timedelta(minutes=1), limit=1000)
    for row in rows:
        assert store.finish_outbox(row, "worker", sent)
    return len(rows)


def keep(store: Store, key: str) -> None:
    answer = KeptAnswer(method="POST", path="/x", fingerprint="f", status=200, body="{}", created_at=utcnow())
    assert store.keep_answer("alice", key, answer, ttl=timedelta(days=1))


def exists(store: Store, request_id: str) -> bool:
    return bool(store.get_requests([request_id]))


def export_lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def problems(store: Store, **kwargs: object) -> list[str]:
    return [problem.problem for problem in store.verify_audit(**kwargs).problems]  # type: ignore[arg-type]


def test_closed_requests_go_and_open_ones_stay(store: Store, tmp_path: Path) -> None:
    store.add_webhook("http://127.0.0.1:9/x", events=["request.decided"], allow_private=True, actor="test")
    old = closed(store, 4)
    executed(store, old[0])
    open_old = ask(store, "still-open")
    keep(store, "old-key")
    assert deliver_all(store) == 4  # each decision's event, sent
    cutoff = utcnow()
    recent = closed(store, 2, thread="later")
    keep(store, "new-key")
    report = store.purge(cutoff, export=tmp_path / "audit.jsonl", keep_audit=False, actor="ops")
    assert [exists(store, request_id) for request_id in old] == [False] * 4
    assert exists(store, open_old) and all(exists(store, request_id) for request_id in recent)
    assert (report.requests, report.executions, report.idempotency_keys) == (4, 1, 1)
    assert report.outbox == 4 and report.attempts == 4
    assert store.get_execution(old[0]) is None
    assert store.kept_answer("alice", "new-key", ttl=timedelta(days=1)) is not None
    assert store.kept_answer("alice", "old-key", ttl=timedelta(days=1)) is None
    assert store.verify_audit().ok, store.verify_audit().problems


def test_an_open_request_holds_back_the_log_but_not_the_requests(store: Store, tmp_path: Path) -> None:
    """The log is dropped only up to the first entry of a request that stays."""
    first = closed(store, 2)
    open_one = ask(store, "open")
    later = closed(store, 2, thread="b")
    cutoff = utcnow()
    report = store.purge(cutoff, export=tmp_path / "a.jsonl", keep_audit=False, actor="ops")
    assert report.requests == 4 and not any(exists(store, r) for r in first + later)
    assert exists(store, open_one)
    assert report.through_seq == 4 and report.audit_entries == 4  # created+decided of the first two
    assert next(iter(store.audit_entries())).seq == 5
    assert store.verify_audit().ok, store.verify_audit().problems


def test_the_export_is_exactly_the_entries_dropped(store: Store, tmp_path: Path) -> None:
    closed(store, 3)
    before = [entry.to_dict() for entry in store.audit_entries()]
    cutoff = utcnow()
    closed(store, 1, thread="later")
    export = tmp_path / "audit.jsonl"
    report = store.purge(cutoff, export=export, keep_audit=False, actor="ops")
    assert export_lines(export) == before
    assert report.through_seq == len(before) == report.audit_entries
    assert next(iter(store.audit_entries())).seq == len(before) + 1
    [record] = store.audit_purges()
    assert (record.through_seq, record.through_hash) == (len(before), before[-1]["hash"])
    assert record.export_name == "audit.jsonl" and record.export_sha256 == report.export_sha256
    assert record.exported == len(before) and record.actor == "ops"
    [purged] = [entry for entry in store.audit_entries() if entry.action == "audit.purged"]
    assert purged.data["requests"] == 3 and purged.data["audit_entries"] == len(before)
    assert purged.data["export_sha256"] == report.export_sha256 and purged.actor == "ops"


def test_purges_in_batches(store: Store, tmp_path: Path) -> None:
    closed(store, 7)
    report = store.purge(utcnow(), export=tmp_path / "a.jsonl", keep_audit=False, actor="ops", batch=3)
    assert report.requests == 7
    assert report.batches == 3 + 5  # requests 3+3+1, entries 14 in 3+3+3+3+2
    assert store.verify_audit().ok


def test_old_anchor_verifies_with_the_export_and_fails_clearly_without(store: Store, tmp_path: Path) -> None:
    closed(store, 2)
    old_anchor = store.audit_anchor()  # entry 4
    closed(store, 1, thread="b")
    cutoff = utcnow()
    closed(store, 1, thread="c")
    export = tmp_path / "audit.jsonl"
    store.purge(cutoff, export=export, keep_audit=False, actor="ops")
    assert store.verify_audit().ok
    found = problems(store, anchor=old_anchor)
    assert len(found) == 1
    assert found[0].startswith("the anchored entry 4 was purged from the live log")
    assert "audit.jsonl" in found[0] and "--export FILE" in found[0]
    report = store.verify_audit(anchor=old_anchor, exports=[export])
    assert report.ok, report.problems
    assert report.exported == 6 and report.purged_through == 6
    wrong = AuditAnchor(4, "0" * 64)
    found = problems(store, anchor=wrong, exports=[export])
    assert any("does not match the anchor" in problem for problem in found)
    # the entry the purge went through is recorded: its anchor needs no export
    [record] = store.audit_purges()
    assert store.verify_audit(anchor=AuditAnchor(record.through_seq, record.through_hash)).ok
    # anchors taken after the purge work as before
    later = store.audit_anchor()
    closed(store, 1, thread="d")
    assert store.verify_audit(anchor=later).ok


def test_a_changed_export_is_detected(store: Store, tmp_path: Path) -> None:
    closed(store, 2)
    anchor = store.audit_anchor()
    cutoff = utcnow()
    closed(store, 1, thread="b")
    export = tmp_path / "audit.jsonl"
    store.purge(cutoff, export=export, keep_audit=False, actor="ops")
    lines = export.read_text(encoding="utf-8").splitlines(keepends=True)
    entry = json.loads(lines[1])
    entry["actor"] = "mallory"
    lines[1] = json.dumps(entry, separators=(",", ":")) + "\n"
    export.write_text("".join(lines), encoding="utf-8")
    found = problems(store, anchor=anchor, exports=[export])
    assert found[0].startswith("export audit.jsonl: the purge through entry 4 recorded another sha256")
    assert any(problem.startswith("the anchored entry 4 was purged") for problem in found) is False
    unrelated = tmp_path / "other.jsonl"
    unrelated.write_text(lines[0], encoding="utf-8")
    found = problems(store, exports=[unrelated])
    assert any("no purge recorded an export with its sha256" in problem for problem in found)


def test_the_trigger_still_refuses_deleting_entries_past_the_purge(store: Store, tmp_path: Path) -> None:
    closed(store, 2)
    cutoff = utcnow()
    closed(store, 1, thread="b")
    store.purge(cutoff, export=tmp_path / "a.jsonl", keep_audit=False, actor="ops")
    first_kept = next(iter(store.audit_entries())).seq
    with pytest.raises(refused(store), match="append-only"):
        run_sql(store, f"DELETE FROM audit_log WHERE seq = {first_kept}")
    with pytest.raises(refused(store), match="append-only"):
        run_sql(store, "DELETE FROM audit_purges")
    with pytest.raises(refused(store), match="never back"):
        run_sql(
            store,
            "INSERT INTO audit_purges (before, through_seq, through_hash, exported, at, actor) "
            "VALUES ('x', 1, 'forged', 0, 'x', 'mallory')",
        )
    assert store.verify_audit().ok


def test_a_dry_run_changes_nothing_and_counts_what_would_go(store: Store, tmp_path: Path) -> None:
    store.add_webhook("http://127.0.0.1:9/x", events=["request.decided"], allow_private=True, actor="test")
    ids = closed(store, 3)
    executed(store, ids[0])
    keep(store, "k")
    deliver_all(store)
    ask(store, "open")
    cutoff = utcnow()
    entries = [entry.to_dict() for entry in store.audit_entries()]
    plan = store.purge(cutoff, export=None, keep_audit=False, actor="ops", dry_run=True)
    assert [entry.to_dict() for entry in store.audit_entries()] == entries
    assert all(exists(store, request_id) for request_id in ids) and store.audit_purges() == []
    report = store.purge(cutoff, export=tmp_path / "a.jsonl", keep_audit=False, actor="ops")
    assert plan.counts() == report.counts()
    # the webhook added, 3 requests asked and decided, 1 run
    assert plan.counts()["requests"] == 3 and plan.counts()["audit_entries"] == 9


def test_keeping_the_log_drops_requests_and_still_verifies(store: Store) -> None:
    ids = closed(store, 2)
    cutoff = utcnow()
    entries = len(list(store.audit_entries()))
    report = store.purge(cutoff, export=None, keep_audit=True, actor="ops")
    assert report.requests == 2 and report.audit_entries == 0 and report.export is None
    assert not any(exists(store, request_id) for request_id in ids)
    assert len(list(store.audit_entries())) == entries + 1  # only audit.purged was added
    assert store.verify_audit().ok, store.verify_audit().problems


def test_a_request_deleted_outside_a_purge_is_still_detected(store: Store) -> None:
    closed(store, 1)
    cutoff = utcnow()
    store.purge(cutoff, export=None, keep_audit=True, actor="ops")
    [later] = closed(store, 1, thread="b")
    from tests.test_audit import tamper

    tamper(store, ("DELETE FROM requests WHERE id = :id", {"id": later}))
    assert any(f"request {later} was created" in problem for problem in problems(store))


@pytest.mark.parametrize(
    ("before", "export", "keep_audit", "message"),
    [
        (timedelta(days=1), "a.jsonl", False, "is in the future"),
        (timedelta(0), None, False, "name a file to export"),
        (timedelta(0), "exists.jsonl", False, "exists already"),
        (timedelta(0), "missing/a.jsonl", False, "its directory does not exist"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(
    store: Store, tmp_path: Path, before: timedelta, export: str | None, keep_audit: bool, message: str
) -> None:
    ids = closed(store, 2)
    (tmp_path / "exists.jsonl").write_text("keep me", encoding="utf-8")
    entries = len(list(store.audit_entries()))
    with pytest.raises(InvalidInput, match=message):
        store.purge(
            utcnow() + before,
            export=tmp_path / export if export else None,
            keep_audit=keep_audit,
            actor="ops",
        )
    assert all(exists(store, request_id) for request_id in ids)
    assert len(list(store.audit_entries())) == entries and store.audit_purges() == []
    assert (tmp_path / "exists.jsonl").read_text(encoding="utf-8") == "keep me"


def test_a_purge_stopped_halfway_is_finished_by_another_process(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = closed(store, 4)
    anchor = store.audit_anchor()
    cutoff = utcnow()
    closed(store, 1, thread="b")

    def crash(*args: object, **kwargs: object) -> None:
        raise RuntimeError("killed")

    monkeypatch.setattr(PurgeOps, "_drop_entries", crash)
    with pytest.raises(RuntimeError):
        store.purge(cutoff, export=tmp_path / "a.jsonl", keep_audit=False, actor="ops", batch=2)
    monkeypatch.undo()
    assert not any(exists(store, request_id) for request_id in ids)
    assert store.verify_audit().ok, store.verify_audit().problems  # consistent at the stop, too
    other = open_store(url_for(store))
    try:
        report = other.purge(cutoff, export=tmp_path / "b.jsonl", keep_audit=False, actor="ops")
        assert report.requests == 0 and report.audit_entries == 0 and report.export is None
        assert next(iter(other.audit_entries())).seq == 9
        assert other.verify_audit(anchor=anchor, exports=[tmp_path / "a.jsonl"]).ok
    finally:
        other.close()


def test_a_second_purge_links_to_the_first(store: Store, tmp_path: Path) -> None:
    closed(store, 1)
    first_anchor = store.audit_anchor()
    store.purge(utcnow(), export=tmp_path / "1.jsonl", keep_audit=False, actor="ops")
    closed(store, 1, thread="b")
    second_anchor = store.audit_anchor()
    store.purge(utcnow(), export=tmp_path / "2.jsonl", keep_audit=False, actor="ops")
    exports = [tmp_path / "1.jsonl", tmp_path / "2.jsonl"]
    for anchor in (first_anchor, second_anchor):
        report = store.verify_audit(anchor=anchor, exports=exports)
        assert report.ok, report.problems
    assert export_lines(tmp_path / "2.jsonl")[0]["seq"] == 3  # the first purge's audit.purged entry
    assert store.verify_audit(anchor=second_anchor, exports=[tmp_path / "2.jsonl"]).ok


def test_the_daily_purge_is_one_replicas(store: Store) -> None:
    other = open_store(url_for(store))
    try:
        assert store.claim_daily_purge(20000) is True
        assert other.claim_daily_purge(20000) is False
        assert store.claim_daily_purge(20000) is False
        assert other.claim_daily_purge(20001) is True
        assert store.claim_daily_purge(19999) is False
    finally:
        other.close()


def test_sqlite_and_postgres_name_the_same_guards(store: Store) -> None:
    """audit_purges is guarded, and verify says when its guard is gone."""
    if is_pg(store):
        run_sql(store, "ALTER TABLE audit_purges DISABLE TRIGGER USER")
        expected = "the trigger audit_purges_guard is disabled"
    else:
        connection = sqlite3.connect(store.path)  # type: ignore[attr-defined]
        connection.execute("DROP TRIGGER audit_purges_no_delete")
        connection.close()
        expected = "the trigger audit_purges_no_delete is missing"
    assert any(problem.startswith(expected) for problem in problems(store))
