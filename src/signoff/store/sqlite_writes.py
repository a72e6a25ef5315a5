"""Writing to a SQLite store: one write transaction at a time (`BEGIN IMMEDIATE`), committed
durably before the writer returns, with group commit (concurrent writers share one commit) and
`grouped()` blocks whose writes share theirs."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field

from ..errors import StoreError
from .core import Changes, Tx
from .failures import sqlite_error
from .sqlite_connection import connect, translated
from .sqlite_hot import SQLiteHotWrites
from .sqlite_subscribers import SubscribedEvents
from .sqlite_tx import RowPlan, SQLiteTx
from .sqlite_write_scope import TransactionScope, WriteScope, _again

log = logging.getLogger("signoff.store")
MAX_GROUP_COMMIT = 64
"""At most this many writers share one commit."""


class _Batch:
    """Writers whose work waits in one open transaction for its commit."""

    def __init__(self) -> None:
        self.size = 0
        self._open = threading.Lock()
        self._open.acquire()  # released once, when its commit is over (a lock is cheaper than an Event)
        self.error: StoreError | None = None
        """Why its commit failed: none of its writers' work was kept."""

    def finish(self) -> None:
        self._open.release()

    def wait(self) -> None:
        """Until its commit is over: at once if it is."""
        with self._open:
            pass


@dataclass
class _Group:
    """What `grouped()` does once its commit succeeds."""

    changed: set[str] = field(default_factory=set)
    callbacks: list[Callable[[], None]] = field(default_factory=list)
    batch: _Batch | None = None
    """The transaction the group's writes went into."""


class ThreadState(threading.local):
    """A thread's own state in a SQLite store; the class attributes are its defaults, read
    without the AttributeError (and its message) that a thread-local attribute never set costs."""

    writing = False
    """Inside a write of this thread's: a write within it is part of it."""
    group: _Group | None = None
    """The `grouped()` block this thread is in."""
    reader: sqlite3.Connection | None = None
    """This thread's reader connection."""


class SQLiteWrites(SQLiteHotWrites):
    """The write side of `SQLiteStore`, which sets up the state below."""

    path: str
    commits: int
    """Commits made so far; concurrent writers share them (group commit)."""
    _connection: sqlite3.Connection
    _lock: threading.RLock
    _local: ThreadState
    _queries: dict[str, str]
    _plans: dict[str, RowPlan]
    _broken: bool
    """The write connection could not even roll back: replace it before the next write."""
    _batch: _Batch | None
    _waiting: int
    _waiting_lock: threading.Lock
    _closed: bool
    _subscribed: SubscribedEvents

    def _write(self) -> AbstractContextManager[SQLiteTx]:
        """One write transaction, committed durably before this returns.

        Group commit: when other threads are already waiting to write, the transaction is kept
        open (each caller's work is a savepoint inside it) and the last writer of the group
        commits for all, so a burst of concurrent writes shares one fsync. Nobody returns before
        the commit that holds their work, and if that commit fails (a full disk), everyone in it
        gets the error (`StoreUnavailable`) and none of their work is kept.
        """
        if self._inside_write():
            return self._inner_write()
        return WriteScope(self)

    def _transaction(self) -> AbstractContextManager[tuple[Tx, Changes]]:
        if self._inside_write():
            return super()._transaction()
        return TransactionScope(self)

    def _inside_write(self) -> bool:
        """Whether this thread writes inside its own write or a `grouped()` block now."""
        local = self._local
        return local.writing or local.group is not None

    @contextmanager
    def _inner_write(self) -> Iterator[SQLiteTx]:
        """A write inside this thread's own write (part of it), or inside `grouped()` (its end commits)."""
        if self._local.writing:
            yield SQLiteTx(self._connection, self._queries, self._plans)
            return
        group = self._local.group
        assert group is not None
        with translated("the write failed"):
            self._ensure_open()
            group.batch = self._join_batch(group.batch)
            with self._savepoint(group.batch) as tx:
                yield tx
            group.batch.size += 1

    def _join_batch(self, previous: _Batch | None) -> _Batch:
        """The open transaction writers share, begun now if none is open. `previous`: the batch
        this thread's group wrote into; if it failed, so does every later write of the group."""
        if previous is not None and previous.error is not None:
            raise _again(previous.error)
        if self._batch is None:
            if self._broken:
                self._reconnect()
            self._connection.execute("BEGIN IMMEDIATE")
            self._batch = _Batch()
        return self._batch

    @contextmanager
    def _savepoint(self, batch: _Batch) -> Iterator[SQLiteTx]:
        """One writer's work inside the open transaction: undone alone if it fails. The batch's
        first writer needs no savepoint: its work is all the transaction holds, undone by
        rolling the transaction back."""
        connection = self._connection
        first = batch.size == 0
        if not first:
            connection.execute("SAVEPOINT signoff_write")
        self._local.writing = True
        try:
            yield SQLiteTx(connection, self._queries, self._plans)
            if not first:
                connection.execute("RELEASE signoff_write")
        except BaseException as exc:
            if first:
                self._roll_back()
                self._finish(batch)
            else:
                self._undo(batch, exc)
            raise
        finally:
            self._local.writing = False

    def _undo(self, batch: _Batch, exc: BaseException) -> None:
        """Undo the work of one writer that failed. On some errors (a full disk, an I/O error)
        SQLite has already rolled the whole transaction back: then the other writers' work in
        the batch is gone too, and they are told so."""
        connection = self._connection
        if connection.in_transaction:
            try:
                connection.execute("ROLLBACK TO signoff_write")
                connection.execute("RELEASE signoff_write")
                return
            except sqlite3.Error:
                log.warning("could not roll back a failed write alone; abandoning its batch", exc_info=True)
        if isinstance(exc, StoreError):
            error = _again(exc)
        elif isinstance(exc, sqlite3.Error):
            error = sqlite_error(exc, "the write could not be committed")
            error.__cause__ = exc
        else:
            error = StoreError(f"the write could not be committed: {type(exc).__name__}: {exc}")
        self._abandon(batch, error)

    def _commit_if_last(self) -> None:
        """Commit the open batch unless more writers are about to join it."""
        batch = self._batch
        if batch is None:
            return
        with self._waiting_lock:
            others = self._waiting
        if others == 0 or batch.size >= MAX_GROUP_COMMIT:
            self._commit(batch)

    def _commit(self, batch: _Batch) -> None:
        """Commit the batch's transaction; if that fails, roll it back and tell its writers.
        Never raises: the caller must still release the write lock."""
        try:
            if not self._connection.in_transaction:
                raise sqlite3.OperationalError("SQLite had already rolled the transaction back")
            self._connection.execute("COMMIT")
            self.commits += 1
            self._finish(batch)
        except sqlite3.Error as exc:
            error = sqlite_error(exc, "the write could not be committed")
            error.__cause__ = exc
            self._abandon(batch, error)

    def _abandon(self, batch: _Batch, error: StoreError) -> None:
        """Give up the batch's transaction: nothing in it is kept, its writers get `error`."""
        batch.error = error
        self._roll_back()
        self._finish(batch)

    def _finish(self, batch: _Batch) -> None:
        if self._batch is batch:
            self._batch = None
        batch.finish()

    def _roll_back(self) -> None:
        """End whatever transaction is open on the writer connection. If even that fails, the
        connection is replaced before the next write (closing it rolls back)."""
        if not self._connection.in_transaction:
            return
        try:
            self._connection.execute("ROLLBACK")
        except sqlite3.Error:
            log.warning("could not roll back; the write connection will be replaced", exc_info=True)
            self._broken = True

    def _reconnect(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self._connection.close()
        self._connection = connect(self.path)
        self._broken = False

    @contextmanager
    def grouped(self) -> Iterator[None]:
        """Writes this thread makes inside share one commit, made when the block ends; others
        write after it. Reads inside see the block's own writes. A write inside returns before
        it is durable: tell nobody of it until the block has ended without error (a failed
        commit raises StoreError here, and none of the block's writes happened; once it has
        failed, the block's later writes fail too)."""
        if self._local.group is not None:
            yield
            return
        group = _Group()
        self._lock.acquire()
        self._local.group = group
        try:
            yield
        finally:
            self._local.group = None
            try:
                if self._batch is not None:
                    self._commit(self._batch)
            finally:
                self._lock.release()
        if group.batch is not None and group.batch.error is not None:
            raise _again(group.batch.error)
        if group.changed:
            self.hub.fire(group.changed)
        for callback in group.callbacks:
            callback()

    def _committed(self, request_ids: set[str]) -> None:
        group = self._local.group
        if group is not None:  # woken when the group commits
            group.changed.update(request_ids)
        else:
            self.hub.fire(request_ids)

    def on_commit(self, callback: Callable[[], None]) -> None:
        group = self._local.group
        if group is not None:
            group.callbacks.append(callback)
        else:
            callback()

    def _webhooks_may_want(self, event: str) -> bool:
        return self._subscribed.wanted(self._connection, event)

    def _webhooks_changed(self) -> None:
        self._subscribed.forget()

    def _ensure_open(self) -> None:
        if self._closed:
            raise StoreError("the store is closed")
