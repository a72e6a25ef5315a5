"""Named queries on one SQLite connection: parameters turned into SQLite's types, rows back
into Python's (JSON columns decoded, times as datetimes), one plan per query."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import datetime
from typing import Any

from .._util import from_iso, to_iso
from .core import Json

JSON_COLUMNS = frozenset(
    {
        "args",
        "args_schema",
        "answer_schema",
        "rule",
        "decision",
        "final_args",
        "payload",
        "owner",
        "result",
        "data",
        "ref",
        "events",
        "secrets",
        "settings",
    }
)
TIME_COLUMNS = frozenset(
    {
        "created_at",
        "updated_at",
        "deadline",
        "decided_at",
        "lease_until",
        "started_at",
        "finished_at",
        "expires_at",
        "used_at",
        "revoked_at",
        "next_at",
        "claimed_until",
        "attempted_at",
        "verified_at",
        "code_expires_at",
        "code_requested_at",
        "signed_in_at",
        "due_at",
        "done_at",
    }
)


_PLAIN = frozenset({str, int, float, bool, type(None)})


def _param(value: Any) -> Any:
    if isinstance(value, Json):
        if value.text is not None:
            return value.text
        return json.dumps(value.value, ensure_ascii=False, separators=(",", ":"), default=str)
    if isinstance(value, datetime):
        return to_iso(value)
    if isinstance(value, list | tuple):
        return json.dumps(list(value))
    return value


RowPlan = tuple[tuple[str, Callable[[Any], Any] | None], ...]
"""Each result column's name and how its stored text is read back (None: as it is)."""


def _row_plan(cursor: sqlite3.Cursor) -> RowPlan:
    return tuple(
        (name, json.loads if name in JSON_COLUMNS else from_iso if name in TIME_COLUMNS else None)
        for name, *_ in cursor.description
    )


def _row(plan: RowPlan, values: tuple[Any, ...]) -> dict[str, Any]:
    return {
        name: value if convert is None or value is None else convert(value)
        for (name, convert), value in zip(plan, values, strict=True)
    }


class SQLiteTx:
    """Named queries on one connection: parameters in (JSON, times), rows out as dicts."""

    def __init__(
        self, connection: sqlite3.Connection, queries: dict[str, str], plans: dict[str, RowPlan]
    ) -> None:
        self._connection = connection
        self._queries = queries
        self._plans = plans

    def _plan(self, query: str, cursor: sqlite3.Cursor) -> RowPlan:
        plan = self._plans.get(query)
        if plan is None:
            plan = self._plans[query] = _row_plan(cursor)
        return plan

    def _execute(self, query: str, params: dict[str, Any]) -> sqlite3.Cursor:
        plain = _PLAIN
        return self._connection.execute(
            self._queries[query],
            {key: value if type(value) in plain else _param(value) for key, value in params.items()},
        )

    def one(self, query: str, /, **params: Any) -> dict[str, Any] | None:
        cursor = self._execute(query, params)
        values = cursor.fetchone()
        result = _row(self._plan(query, cursor), values) if values is not None else None
        cursor.close()
        return result

    def one_keeping(self, query: str, keep: str, /, **params: Any) -> dict[str, Any] | None:
        """`one`, with the column `keep` left as its stored text."""
        cursor = self._execute(query, params)
        values = cursor.fetchone()
        if values is None:
            cursor.close()
            return None
        key = f"{query}:{keep}"
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = tuple(
                (name, None if name == keep else convert) for name, convert in _row_plan(cursor)
            )
        cursor.close()
        return _row(plan, values)

    def all(self, query: str, /, **params: Any) -> list[dict[str, Any]]:
        cursor = self._execute(query, params)
        rows = cursor.fetchall()
        if not rows:
            return []
        plan = self._plan(query, cursor)
        return [_row(plan, values) for values in rows]

    def run(self, query: str, /, **params: Any) -> int:
        return self._execute(query, params).rowcount

    def run_as_is(self, query: str, params: dict[str, Any]) -> int:
        """`run`, with `params` already as SQLite takes them (no JSON or time to convert)."""
        return self._connection.execute(self._queries[query], params).rowcount

    def send(self, query: str, /, **params: Any) -> None:
        self._execute(query, params)
