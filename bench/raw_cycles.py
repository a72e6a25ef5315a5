"""The raw drivers' store cycle: the ceiling signoff's create + decide cycle is compared with.

The same two transactions signoff's cycle makes, written by hand on the bare driver (sqlite3,
psycopg): a request row inserted into a table of signoff's shape (its columns, its unique key and
its three listing indexes), then compare-and-set from pending to approved; each transaction also
appends its audit entry to a hash chain as signoff's log keeps it: the head row read, the entry's
hash = sha256(seq|prev_hash|payload) with the payload the entry's fields and data as canonical
JSON, the entry inserted (indexed by request) and the head moved. On PostgreSQL the hash is taken
in SQL (from the head row, locked) and each transaction's statements are pipelined: one round trip,
as signoff's fused statement is. What it
leaves out is what signoff adds on top: the audit log's guard triggers, the outbox, savepoints for
group commit, the approver rows' status trigger, and every check the library makes.

Until this module, the raw side wrote only the request row (one INSERT, one UPDATE) and no audit
entry: its numbers then are not comparable with these.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from signoff._util import to_iso, utcnow
from signoff.rules.model import RequestRule

if TYPE_CHECKING:
    import psycopg

EMAIL_ARGS = {"to": "bob@example.com", "subject": "Quarterly report", "body": "Numbers attached."}
RULE_SNAPSHOT = RequestRule().snapshot()
COLUMNS = (
    "id",
    "thread_id",
    "tool_call_id",
    "tool_name",
    "args",
    "status",
    "description",
    "rule",
    "created_at",
    "updated_at",
    "deadline",
    "created_by",
    "no_approvers",
)
TABLES = (
    """CREATE TABLE raw_requests (
    id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, tool_call_id TEXT NOT NULL, tool_name TEXT NOT NULL,
    args TEXT NOT NULL, status TEXT NOT NULL, description TEXT NOT NULL, rule TEXT NOT NULL,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, deadline TEXT NOT NULL,
    decided_at TEXT, decision TEXT, final_args TEXT, created_by TEXT NOT NULL, no_approvers INTEGER NOT NULL,
    UNIQUE (thread_id, tool_call_id, created_by))""",
    "CREATE INDEX raw_requests_open_by_deadline ON raw_requests (status, deadline)",
    "CREATE INDEX raw_requests_by_creator ON raw_requests (created_by, status, id)",
    "CREATE INDEX raw_requests_by_audience ON raw_requests (no_approvers, status, id)",
    """CREATE TABLE raw_audit_log (
    seq INTEGER PRIMARY KEY, at TEXT NOT NULL, actor TEXT NOT NULL, channel TEXT NOT NULL,
    action TEXT NOT NULL, request_id TEXT, data TEXT NOT NULL, prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL)""",
    "CREATE INDEX raw_audit_log_by_request ON raw_audit_log (request_id)",
    "CREATE TABLE raw_audit_head (id INTEGER PRIMARY KEY, seq INTEGER NOT NULL, hash TEXT NOT NULL)",
    "INSERT INTO raw_audit_head (id, seq, hash) VALUES (1, 0, '')",
)
"""The same tables for both drivers, every column text (signoff's PostgreSQL schema has json and
timestamptz columns: the raw psycopg side skips their parsing)."""
INSERT = "INSERT INTO raw_requests ({}) VALUES ({})".format(
    ", ".join(COLUMNS), ", ".join(f":{name}" for name in COLUMNS)
)
APPROVE = (
    "UPDATE raw_requests SET status = 'approved', decided_at = :now, updated_at = :now, "
    "decision = :decision, final_args = :final_args WHERE id = :id AND status = 'pending'"
)
HEAD = "SELECT seq, hash FROM raw_audit_head WHERE id = 1"
APPEND = (
    "INSERT INTO raw_audit_log (seq, at, actor, channel, action, request_id, data, prev_hash, hash) "
    "VALUES (:seq, :at, :actor, :channel, :action, :request_id, :data, :prev_hash, :hash)"
)
MOVE_HEAD = "UPDATE raw_audit_head SET seq = :seq, hash = :hash WHERE id = 1"


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_params(index: int) -> dict[str, Any]:
    """What an application writing requests by hand would insert: signoff's columns."""
    now = to_iso(utcnow())
    return {
        "id": f"raw-{index}",
        "thread_id": "bench-cycles",
        "tool_call_id": f"call-{index}",
        "tool_name": "send_email",
        "args": json.dumps(EMAIL_ARGS),
        "status": "pending",
        "description": "Send an email to bob@example.com",
        "rule": json.dumps(RULE_SNAPSHOT),
        "created_at": now,
        "updated_at": now,
        "deadline": to_iso(utcnow() + timedelta(hours=1)),
        "created_by": "local",
        "no_approvers": 1,
    }


def approve_params(request_id: str) -> dict[str, Any]:
    now = to_iso(utcnow())
    decision = {"type": "approve", "actor": "alice", "channel": "bench", "at": now}
    return {
        "id": request_id,
        "now": now,
        "decision": json.dumps(decision),
        "final_args": json.dumps(EMAIL_ARGS),
    }


def entry(
    head: tuple[int, str], action: str, actor: str, request_id: str, data: dict[str, Any]
) -> dict[str, Any]:
    """The next audit entry after `head`, hashed as signoff hashes its entries."""
    seq, prev_hash = head[0] + 1, head[1]
    at = to_iso(utcnow())
    data_text = canonical(data)
    payload = canonical([at, actor, "bench", action, request_id])[:-1] + "," + data_text + "]"
    digest = hashlib.sha256(f"{seq}|{prev_hash}|{payload}".encode()).hexdigest()
    return {
        "seq": seq,
        "at": at,
        "actor": actor,
        "channel": "bench",
        "action": action,
        "request_id": request_id,
        "data": data_text,
        "prev_hash": prev_hash,
        "hash": digest,
    }


def created_data(params: dict[str, Any]) -> dict[str, Any]:
    return {
        "tool": params["tool_name"],
        "thread_id": params["thread_id"],
        "tool_call_id": params["tool_call_id"],
        "args": EMAIL_ARGS,
        "approvers": [],
        "deadline": params["deadline"],
        "status": "pending",
    }


DECIDED_DATA = {"type": "approve", "original_args": EMAIL_ARGS}


def open_raw_sqlite(path: Path) -> sqlite3.Connection:
    """A connection as signoff's writer has it (WAL, synchronous=FULL), with the tables made."""
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = FULL")
    for statement in TABLES:
        connection.execute(statement)
    return connection


def raw_sqlite_cycle(connection: sqlite3.Connection) -> Callable[[int], None]:
    def append(action: str, actor: str, request_id: str, data: dict[str, Any]) -> None:
        head = connection.execute(HEAD).fetchone()
        added = entry(head, action, actor, request_id, data)
        connection.execute(APPEND, added)
        connection.execute(MOVE_HEAD, added)

    def cycle(index: int) -> None:
        params = request_params(index)
        connection.execute("BEGIN IMMEDIATE")
        connection.execute(INSERT, params)
        append("request.created", "local", params["id"], created_data(params))
        connection.execute("COMMIT")
        connection.execute("BEGIN IMMEDIATE")
        connection.execute(APPROVE, approve_params(params["id"]))
        append("request.decided", "alice", params["id"], DECIDED_DATA)
        connection.execute("COMMIT")

    return cycle


def to_psycopg(query: str) -> str:
    """`:name` parameters as psycopg's `%(name)s`."""
    return re.sub(r":(\w+)", r"%(\1)s", query)


def create_postgres_tables(connection: psycopg.Connection[Any]) -> None:
    with connection.transaction():
        for statement in TABLES:
            connection.execute(statement)


PG_APPEND = """
INSERT INTO raw_audit_log (seq, at, actor, channel, action, request_id, data, prev_hash, hash)
SELECT seq + 1, %(at)s, %(actor)s, %(channel)s, %(action)s, %(request_id)s, %(data)s, hash,
       encode(sha256(convert_to((seq + 1) || '|' || hash || '|' || %(payload)s, 'UTF8')), 'hex')
FROM raw_audit_head WHERE id = 1 FOR UPDATE"""
PG_MOVE_HEAD = """
UPDATE raw_audit_head h SET seq = a.seq, hash = a.hash
FROM raw_audit_log a WHERE h.id = 1 AND a.seq = h.seq + 1"""
"""PostgreSQL's append hashes in SQL, so that a transaction's statements are pipelined in one round
trip (as signoff's one fused statement is), the head row locked by the first."""


def postgres_entry(action: str, actor: str, request_id: str, data: dict[str, Any]) -> dict[str, Any]:
    at = to_iso(utcnow())
    data_text = canonical(data)
    payload = canonical([at, actor, "bench", action, request_id])[:-1] + "," + data_text + "]"
    return {
        "at": at,
        "actor": actor,
        "channel": "bench",
        "action": action,
        "request_id": request_id,
        "data": data_text,
        "payload": payload,
    }


def raw_postgres_cycle(connection: psycopg.Connection[Any]) -> Callable[[int], None]:
    insert, approve = to_psycopg(INSERT), to_psycopg(APPROVE)

    def append(action: str, actor: str, request_id: str, data: dict[str, Any]) -> None:
        connection.execute(PG_APPEND, postgres_entry(action, actor, request_id, data))
        connection.execute(PG_MOVE_HEAD)

    def cycle(index: int) -> None:
        params = request_params(index)
        with connection.pipeline(), connection.transaction():
            connection.execute(insert, params)
            append("request.created", "local", params["id"], created_data(params))
        with connection.pipeline(), connection.transaction():
            connection.execute(approve, approve_params(params["id"]))
            append("request.decided", "alice", params["id"], DECIDED_DATA)

    return cycle
