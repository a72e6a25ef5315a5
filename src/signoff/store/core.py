"""What every store backend provides, and the I/O-free pieces all of them share.

A backend (SQLite, PostgreSQL) supplies only: a write transaction and a read context that run
named queries (`Tx`), its parameter and row conversions, and a source of cross-process
wake-ups. Everything else — the request lifecycle, decisions, executions, settings, the audit
chain — is written once, in the operation mixins, on top of `Tx`.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Protocol

from .._util import canonical_json, to_iso, utcnow
from ..audit import AuditEntry, entry_payload
from ..decisions import Decision, DecisionRecord, parse_decision
from ..jsonvalues import storable_text
from ..requests import Request, request_from_record
from .disk import DiskSpace
from .wakeup import Waiter, WakeupHub

HEALTH_COUNTER = "health_checks"
SEAL_BATCH = 1000
"""Queued audit entries one sealing statement moves into the chain."""
"""The counter `check_writable` bumps."""


@dataclass(frozen=True)
class Json:
    """Marks a parameter to be stored as JSON (text in SQLite, json in PostgreSQL; key order kept).
    `text`, when given, is the value already encoded; otherwise it is encoded here, and a value JSON
    cannot hold (NaN, infinities, a lone surrogate, nesting too deep) is refused with InvalidInput
    before anything is written, so that whatever is stored can be sent back."""

    value: Any
    text: str | None = None

    def __post_init__(self) -> None:
        if self.text is None:
            object.__setattr__(self, "text", storable_text(self.value))


class Tx(Protocol):
    """Named queries inside one transaction (or one read)."""

    def one(self, query: str, /, **params: Any) -> dict[str, Any] | None: ...

    def all(self, query: str, /, **params: Any) -> list[dict[str, Any]]: ...

    def run(self, query: str, /, **params: Any) -> int: ...

    def send(self, query: str, /, **params: Any) -> None:
        """Run a statement whose result is not needed now (PostgreSQL pipelines it to the commit)."""


@dataclass(frozen=True)
class AuditNote:
    """An audit entry to append with the change it records."""

    action: str
    actor: str
    channel: str
    request_id: str | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def params(self) -> dict[str, Any]:
        """The `queue_audit` (and `append_audit`) parameters: the fields, the data once encoded,
        and the hashed payload."""
        at = to_iso(utcnow())
        data_text = canonical_json(self.data)
        payload = entry_payload(
            at=at,
            actor=self.actor,
            channel=self.channel,
            action=self.action,
            request_id=self.request_id,
            data_text=data_text,
        )
        return {
            "at": at,
            "actor": self.actor,
            "channel": self.channel,
            "action": self.action,
            "request_id": self.request_id,
            "data_json": Json(self.data, data_text),
            "payload": payload,
        }


@dataclass
class Changes:
    """Request ids a transaction changed: waiters are woken after it commits."""

    request_ids: set[str] = field(default_factory=set)


class StoreCore(ABC):
    """The backend contract, plus shared helpers used by the operation mixins."""

    url: str
    hub: WakeupHub
    groups_writes: bool = False
    """Whether `grouped()` makes writes share a commit."""
    seals_at_commit: bool = True
    """Whether each audit entry joins the hash chain as its write commits (SQLite, one writer at a
    time); otherwise writes queue their entries and `seal_audit` chains them (PostgreSQL)."""

    @abstractmethod
    def _write(self) -> AbstractContextManager[Tx]:
        """A write transaction."""

    @abstractmethod
    def _read(self) -> AbstractContextManager[Tx]:
        """A consistent read."""

    @abstractmethod
    def _start_wakeup_source(self) -> None:
        """Start (once) whatever tells this process of changes committed by other processes."""

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def groups_of(self, user: str) -> list[str]:
        """The groups a user belongs to (for `group:NAME` approvers)."""

    def __enter__(self) -> StoreCore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _transaction(self) -> AbstractContextManager[tuple[Tx, Changes]]:
        """A write transaction, and the requests it changes: their waiters are woken once it
        has committed."""
        return _Transaction(self)

    def _committed(self, request_ids: set[str]) -> None:
        """Wake this process's waiters on requests a committed write changed."""
        self.hub.fire(request_ids)

    def on_commit(self, callback: Callable[[], None]) -> None:
        """Call `callback` once this thread's writes so far are committed: now, or, inside
        `grouped()`, after the group's commit (never, if that commit fails)."""
        callback()

    def grouped(self) -> AbstractContextManager[None]:
        """Writes this thread makes inside share one commit, made when the block ends (where the
        backend can: SQLite; elsewhere each write commits on its own). A write inside returns
        before it is durable: tell nobody of it until the block has ended without error."""
        return nullcontext()

    # -- wake-ups -----------------------------------------------------------------------------

    def subscribe(self, request_id: str) -> Waiter:
        """Be woken when the request changes; `unsubscribe` when done."""
        self._start_wakeup_source()
        return self.hub.subscribe(request_id)

    def subscribe_async(self, request_id: str) -> Waiter:
        import asyncio  # here, not for every command that opens a store

        self._start_wakeup_source()
        return self.hub.subscribe(request_id, loop=asyncio.get_running_loop())

    def unsubscribe(self, waiter: Waiter) -> None:
        self.hub.unsubscribe(waiter)

    # -- the two hot writes: a backend may fuse each into one statement -----------------------

    def _insert_request_audited(
        self, params: dict[str, Any], approvers: list[str], note: AuditNote
    ) -> dict[str, Any] | None:
        """Insert a request with its approvers, audit entry, outbox rows (`params["notices"]`,
        and its webhooks' `request.created`, when it is pending) and, when a process waits to run
        it (`params["runner"]`), its execution record, and its planned steps (`params["steps"]`:
        reminders and escalations); None if its key already exists."""
        now = params["now"]
        with self._transaction() as (tx, changes):
            if tx.run("insert_request", **params) == 0:
                return None
            row = {"id": params["id"]}
            for principal in approvers:
                tx.send("insert_approver", request_id=row["id"], principal=principal)
            tx.send("queue_audit", **note.params())
            if params["runner"] is not None:
                tx.send("expect_execution", request_id=row["id"], runner=params["runner"], now=now)
            for step in params["steps"].value:
                tx.send("insert_step", request_id=row["id"], **{**step, "payload": Json(step["payload"])})
            if params["status"] == "pending":
                for notice in params["notices"].value:
                    tx.send("enqueue_notice", request_id=row["id"], event=note.action, now=now, **notice)
                if self._webhooks_may_want(note.action):
                    tx.send("enqueue_event", request_id=row["id"], event=note.action, message=None, now=now)
            changes.request_ids.add(row["id"])
            return row

    def _finish_request_audited(
        self, params: dict[str, Any], note: AuditNote, *, notified: bool = True
    ) -> dict[str, Any] | None:
        """Compare-and-set a pending request (before its deadline) to its decision, with the audit
        entry and the outbox rows it causes (each notice's update, the webhooks' event); None if
        it was no longer pending. `notified`: the request may have had notices (False only when
        its rule routes to no channel but the inbox)."""
        with self._transaction() as (tx, changes):
            return self._finish_in(tx, changes, params, note, notified=notified)

    def _finish_in(
        self, tx: Tx, changes: Changes, params: dict[str, Any], note: AuditNote, *, notified: bool
    ) -> dict[str, Any] | None:
        """`_finish_request_audited` inside a write transaction already open."""
        if tx.run("finish_request", **params) == 0:
            return None
        row = {"id": params["id"]}
        tx.send("queue_audit", **note.params())
        if notified or self._webhooks_may_want(note.action):
            tx.send(
                "enqueue_event", request_id=row["id"], event=note.action, message="update", now=params["now"]
            )
        changes.request_ids.add(row["id"])
        return row

    def _decide_at_once(
        self, request_id: str, decision: Decision, *, actor: str, channel: str, on_behalf: bool
    ) -> tuple[bool, Request] | None:
        """Check and record `decision` in one round trip, where the backend can and the checks
        pass (`decide_statement`): (True, the request decided). When they do not, nothing was
        changed and `decide` checks it as usual, refusing, auditing or recording as that path
        does: from (False, the request as the statement read it), or, when None (not tried), from
        its own read."""
        return None

    def _webhooks_may_want(self, event: str) -> bool:
        """Whether some webhook may want `event`, asked inside a write transaction: the outbox's
        event statement is skipped when none does. A backend that cannot tell cheaply says yes."""
        return True

    def _webhooks_changed(self) -> None:  # noqa: B027 - a backend that remembers nothing does nothing
        """Called inside each transaction that adds, changes or removes a webhook."""

    def check_writable(self) -> None:
        """Make a small real write (a counter bumped, committed to disk like every write).
        Raises `StoreUnavailable`, saying why, when the store cannot write now: a full disk, a
        read-only file, a lost database."""
        with self._write() as tx:
            tx.run("bump_counter", name=HEALTH_COUNTER)

    def disk_space(self) -> DiskSpace | None:
        """The free space where the database's files are, when this process can know it (see
        `disk`): None here, and for PostgreSQL."""
        return None

    # -- audit --------------------------------------------------------------------------------

    def record(
        self,
        action: str,
        *,
        actor: str,
        channel: str,
        request_id: str | None = None,
        data: dict[str, Any] | None = None,
    ) -> AuditEntry:
        """Append an entry of your own to the audit log."""
        note = AuditNote(action, actor, channel, request_id, data or {})
        params = note.params()
        with self._transaction() as (tx, _):
            row = self._append_sealed(tx, params)
        return AuditEntry(
            seq=int(row["seq"]),
            at=params["at"],
            actor=actor,
            channel=channel,
            action=action,
            request_id=request_id,
            data=note.data,
            prev_hash=row["prev_hash"],
            hash=row["hash"],
        )

    def _append_sealed(self, tx: Tx, params: dict[str, Any]) -> dict[str, Any]:
        """Append one entry straight into the chain, after what is queued (sealed first, under
        the same lock), and return its row: for callers that need its sequence number and hash."""
        if not self.seals_at_commit:
            while (sealed := tx.one("seal_audit", limit=SEAL_BATCH, wait=True)) and sealed[
                "sealed"
            ] >= SEAL_BATCH:
                pass
        row = tx.one("append_audit", **params)
        assert row is not None, "audit_head row missing: the schema was not migrated"
        return row

    def _audit(
        self,
        tx: Tx,
        action: str,
        *,
        actor: str,
        channel: str,
        request_id: str | None = None,
        data: dict[str, Any] | None = None,
    ) -> None:
        """Append to the hash chain in the same transaction as the change it records."""
        tx.send("queue_audit", **AuditNote(action, actor, channel, request_id, data or {}).params())

    # -- rows ---------------------------------------------------------------------------------

    @staticmethod
    def _request(row: dict[str, Any], approvals: tuple[str, ...] = ()) -> Request:
        return request_from_record(row, approvals)

    @staticmethod
    def _decision_record(row: dict[str, Any]) -> DecisionRecord:
        return DecisionRecord(
            id=row["id"],
            request_id=row["request_id"],
            decision=parse_decision(row["payload"]),
            actor=row["actor"],
            channel=row["channel"],
            created_at=row["created_at"],
        )


class _Transaction:
    """`StoreCore._transaction`: a class, where a generator's context manager costs a write on
    the hot path a few microseconds more."""

    __slots__ = ("_changes", "_store", "_write")

    def __init__(self, store: StoreCore) -> None:
        self._store = store
        self._write = store._write()
        self._changes = Changes()

    def __enter__(self) -> tuple[Tx, Changes]:
        return self._write.__enter__(), self._changes

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: Any
    ) -> bool | None:
        kept = self._write.__exit__(kind, error, trace)  # raises when the commit fails
        if kind is None and self._changes.request_ids:
            self._store._committed(self._changes.request_ids)
        return kept


class BackgroundThread:
    """A daemon thread running `target(stop_event)` until `stop()`."""

    def __init__(self, name: str, target: Any) -> None:
        self.stop_event = threading.Event()
        self._thread = threading.Thread(target=target, args=(self.stop_event,), name=name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self.stop_event.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)
