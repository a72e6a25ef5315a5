"""The SQLite store's two hot writes (`StoreCore._insert_request_audited`, `_finish_in`) with
their statements' parameters made once, as SQLite takes them: `SQLiteTx` would copy each call's
parameters and test every value for a JSON or time to convert (~7 µs for a request's two dozen).
The steps, their order and what they write are the generic ones'."""

from __future__ import annotations

from typing import Any

from .._util import to_iso
from .core import AuditNote, Changes, Json, StoreCore, Tx
from .sqlite_tx import SQLiteTx

AS_IS = (
    "id",
    "thread_id",
    "tool_call_id",
    "kind",
    "tool_name",
    "tool_description",
    "agent",
    "app",
    "requester",
    "status",
    "description",
    "created_by",
    "round",
    "client",
)
"""`insert_request`'s parameters SQLite takes as they are."""
AS_JSON = ("args", "args_schema", "answer_schema", "rule")
"""`insert_request`'s JSON parameters (`Json`, or None)."""


def _text(value: Json | None) -> str | None:
    return None if value is None else value.text


def _entry(note: AuditNote) -> dict[str, Any]:
    """`queue_audit`'s parameters for `note`."""
    params = note.params()
    params["data_json"] = params["data_json"].text
    return params


class SQLiteHotWrites(StoreCore):
    def _insert_request_audited(
        self, params: dict[str, Any], approvers: list[str], note: AuditNote
    ) -> dict[str, Any] | None:
        now = params["now"]
        values = {key: params[key] for key in AS_IS}
        for key in AS_JSON:
            values[key] = _text(params[key])
        values["now"] = to_iso(now)
        values["deadline"] = to_iso(params["deadline"])
        with self._transaction() as (tx, changes):
            assert isinstance(tx, SQLiteTx)
            if tx.run_as_is("insert_request", values) == 0:
                return None
            request_id = params["id"]
            for principal in approvers:
                tx.send("insert_approver", request_id=request_id, principal=principal)
            tx.run_as_is("queue_audit", _entry(note))
            if params["runner"] is not None:
                tx.send("expect_execution", request_id=request_id, runner=params["runner"], now=now)
            for step in params["steps"].value:
                tx.send("insert_step", request_id=request_id, **{**step, "payload": Json(step["payload"])})
            if params["status"] == "pending":
                for notice in params["notices"].value:
                    tx.send("enqueue_notice", request_id=request_id, event=note.action, now=now, **notice)
                if self._webhooks_may_want(note.action):
                    tx.send("enqueue_event", request_id=request_id, event=note.action, message=None, now=now)
            changes.request_ids.add(request_id)
            return {"id": request_id}

    def _finish_in(
        self, tx: Tx, changes: Changes, params: dict[str, Any], note: AuditNote, *, notified: bool
    ) -> dict[str, Any] | None:
        assert isinstance(tx, SQLiteTx)
        now = params["now"]
        request_id = params["id"]
        values = {
            "id": request_id,
            "status": params["status"],
            "decision": _text(params["decision"]),
            "final_args": _text(params["final_args"]),
            "now": to_iso(now),
        }
        if tx.run_as_is("finish_request", values) == 0:
            return None
        tx.run_as_is("queue_audit", _entry(note))
        if notified or self._webhooks_may_want(note.action):
            tx.send("enqueue_event", request_id=request_id, event=note.action, message="update", now=now)
        changes.request_ids.add(request_id)
        return {"id": request_id}
