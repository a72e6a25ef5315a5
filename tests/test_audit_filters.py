"""The audit log read by time, actor, request, tool, kind and action, in keyset pages either way,
and written out as JSON Lines or CSV one entry at a time: in the store (SQLite and PostgreSQL)
and through the API."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from signoff import Gate, Pending, RuleSet, Scope, ToolCall
from signoff.audit import AuditEntry
from signoff.audit_export import CSV_COLUMNS, csv_lines, json_lines
from signoff.audit_filter import AuditFilter, parse_moment
from signoff.errors import InvalidInput
from signoff.store import Store, core

from .live import LiveServer

DAY = datetime(2025, 6, 1, tzinfo=UTC)
RULES = RuleSet.from_dict({"tools": {"*": {"requires_approval": True}}})


def ask(store: Store, tool: str, call_id: str) -> str:
    call = ToolCall(name=tool, args={"n": 1}, id=call_id)
    found = Gate(store, rules=RULES).submit(call, Scope(thread_id="t"))
    assert isinstance(found, Pending)
    return found.request.id


@pytest.fixture
def log(store: Store, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A log written over three days (the store's clock moved), by several actors."""
    days = iter([DAY, DAY + timedelta(days=1), DAY + timedelta(days=2)])
    today = next(days)
    monkeypatch.setattr(core, "utcnow", lambda: today)
    store.set_layer("tool", "send_email", {"requires_approval": True}, actor="alice")
    mail = ask(store, "send_email", "c1")
    today = next(days)
    deploy = ask(store, "deploy", "c2")
    store.record("server.started", actor="signoff", channel="server")
    today = next(days)
    store.delete_layer("tool", "send_email", actor="bob")
    store.record("access.refused", actor="mallory", channel="api", data={"path": "/admin"})
    return {"mail": mail, "deploy": deploy}


def actions(store: Store, **where: Any) -> list[str]:
    return [entry.action for entry in store.audit_entries(**where)]


def test_each_filter_keeps_its_entries(store: Store, log: dict[str, Any]) -> None:
    everything = actions(store)
    assert everything == [
        "rules.set",
        "request.created",
        "request.created",
        "server.started",
        "rules.deleted",
        "access.refused",
    ]
    assert actions(store, kind="rules") == ["rules.set", "rules.deleted"]
    assert actions(store, kind="request") == ["request.created", "request.created"]
    assert actions(store, kind="rule") == []  # a family is a whole word
    assert actions(store, action="access.refused") == ["access.refused"]
    assert actions(store, actor="bob") == ["rules.deleted"]
    assert [e.request_id for e in store.audit_entries(tool="deploy")] == [log["deploy"]]
    assert [e.request_id for e in store.audit_entries(request_id=log["mail"])] == [log["mail"]]
    assert actions(store, since=DAY + timedelta(days=1)) == everything[2:]
    assert actions(store, until=DAY + timedelta(days=1)) == everything[:2]
    assert actions(store, since=DAY + timedelta(days=1), until=DAY + timedelta(days=2)) == everything[2:4]
    assert actions(store, since=DAY + timedelta(days=2), kind="access", actor="mallory") == ["access.refused"]
    assert actions(store, tool="deploy", kind="rules") == []


def test_keyset_pages_cover_the_log_once_either_way(store: Store, log: dict[str, Any]) -> None:
    everything = [entry.seq for entry in store.audit_entries()]
    newest = [entry.seq for entry in store.audit_entries(newest_first=True, batch=2)]
    assert newest == list(reversed(everything))
    page = [entry.seq for entry in store.audit_entries(newest_first=True, before=everything[3], batch=2)]
    assert page == list(reversed(everything[:3]))
    assert [e.seq for e in store.audit_entries(after=everything[3], batch=1)] == everything[4:]
    filtered = [e.action for e in store.audit_entries(kind="rules", newest_first=True, batch=1)]
    assert filtered == ["rules.deleted", "rules.set"]
    assert store.audit_entry(everything[2]) is not None and store.audit_entry(10_000) is None


def test_a_filter_is_read_from_what_people_type() -> None:
    where = AuditFilter.parse(since="2025-06-01", until=" 2025-06-02T14:00 ", actor=" ", kind="rules")
    assert where.since == DAY and where.until == datetime(2025, 6, 2, 14, tzinfo=UTC)
    assert where.actor is None and where.kind == "rules"
    assert where.query() == {
        "since": "2025-06-01T00:00:00.000000Z",
        "until": "2025-06-02T14:00:00.000000Z",
        "kind": "rules",
    }
    assert parse_moment("2025-06-01T16:00+02:00", "since") == datetime(2025, 6, 1, 14, tzinfo=UTC)
    assert not AuditFilter.parse().active
    for typed, problem in (
        ({"since": "yesterday"}, "since: 'yesterday' is not a date or time"),
        ({"until": "2025-13-01"}, "until: '2025-13-01' is not a date or time"),
        ({"since": "2025-06-02", "until": "2025-06-01"}, "until: it must be later than since"),
        ({"kind": "rules.set"}, "kind: 'rules.set' is an action"),
    ):
        with pytest.raises(InvalidInput, match=problem):
            AuditFilter.parse(**typed)


def entry(seq: int, actor: str, data: dict[str, Any]) -> AuditEntry:
    return AuditEntry(
        seq=seq, at="2025-06-01T00:00:00.000000Z", actor=actor, channel="web", action="user.added",
        request_id=None, data=data, prev_hash="p", hash="h",
    )  # fmt: skip


def test_csv_rows_read_back_and_a_formula_is_never_a_formula() -> None:
    entries = [entry(1, "alice", {"note": 'a, "quoted"\nline'}), entry(2, "=HYPERLINK(1)", {})]
    rows = list(csv.reader(io.StringIO("".join(csv_lines(entries)))))
    assert rows[0] == list(CSV_COLUMNS)
    assert rows[1][:3] == ["1", "2025-06-01T00:00:00.000000Z", "alice"]
    assert json.loads(rows[1][6]) == {"note": 'a, "quoted"\nline'}
    assert rows[2][2] == "'=HYPERLINK(1)"
    assert [json.loads(line)["seq"] for line in json_lines(entries)] == [1, 2]


def test_exports_are_written_as_they_are_read() -> None:
    """Each line is out before the next entry is read: nothing is built in memory."""
    read: list[int] = []

    def entries() -> Iterator[AuditEntry]:
        for seq in (1, 2, 3):
            read.append(seq)
            yield entry(seq, "alice", {})

    for write, first_lines in ((json_lines, 1), (csv_lines, 2)):
        read.clear()
        lines = write(entries())
        for _ in range(first_lines):
            next(lines)
        assert read == [1]


def test_the_api_filters_pages_and_exports(live_server: LiveServer, log: dict[str, Any]) -> None:
    with live_server.client(live_server.user("root", "admin")) as admin:
        second_day = {"kind": "request", "since": "2025-06-02", "until": "2025-06-03"}
        page = admin.get("/v1/audit", params=second_day)
        assert page.status_code == 200, page.text
        assert [item["request_id"] for item in page.json()["items"]] == [log["deploy"]]

        first = admin.get("/v1/audit", params={"order": "newest", "limit": 2}).json()
        assert [item["action"] for item in first["items"]] == ["token.issued", "user.added"]  # root's
        assert first["next_after"] is None and first["next_before"] == first["items"][-1]["seq"]
        older = admin.get("/v1/audit", params={"order": "newest", "limit": 2, "before": first["next_before"]})
        assert older.json()["items"][0]["seq"] == first["next_before"] - 1

        refused = admin.get("/v1/audit", params={"since": "soon"})
        assert refused.status_code == 422
        assert refused.json()["error"]["message"].startswith("since: 'soon' is not a date or time")

        exported = admin.get("/v1/audit/export", params={"format": "csv", "tool": "send_email"})
        assert exported.status_code == 200 and exported.headers["content-type"].startswith("text/csv")
        assert "content-length" not in exported.headers  # streamed
        assert 'filename="signoff-audit.csv"' in exported.headers["content-disposition"]
        rows = list(csv.DictReader(io.StringIO(exported.text)))
        assert [(row["action"], row["request_id"]) for row in rows] == [("request.created", log["mail"])]

        lines = admin.get("/v1/audit/export", params={"kind": "rules"}).text.splitlines()
        assert [json.loads(line)["action"] for line in lines] == ["rules.set", "rules.deleted"]
    with live_server.client(live_server.user("alice")) as member:
        for path in ("/v1/audit", "/v1/audit/export"):
            assert member.get(path, params={"kind": "rules"}).status_code == 403
