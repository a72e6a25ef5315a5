"""One write transaction of a thread outside any other write or `grouped()` block: what
`SQLiteWrites._write` does on its common path, as a class rather than two nested generator
context managers (each costs a write a few microseconds to enter and leave).

Its steps are `_write`'s and `_savepoint`'s, in their order: wait for the write lock (counted
among the waiting, so that the writer before it keeps its batch open), join the open batch or
begin one, a savepoint unless it is the batch's first writer; on leaving, release the savepoint
or undo the writer's work alone, commit unless more writers are about to join, and return only
once the commit that holds its work is over (raising the batch's error if that commit failed).
"""

from __future__ import annotations

import sqlite3
from types import TracebackType
from typing import TYPE_CHECKING

from ..errors import StoreError
from .core import Changes
from .failures import sqlite_error
from .sqlite_tx import SQLiteTx

if TYPE_CHECKING:
    from .sqlite_writes import SQLiteWrites, _Batch


def _again(error: StoreError) -> StoreError:
    """A fresh copy of `error` for another thread to raise (one exception raised in several
    threads at once would share one traceback)."""
    fresh = type(error)(error.message)
    fresh.__cause__ = error.__cause__
    return fresh


class WriteScope:
    """`with WriteScope(store) as tx:` one write, committed durably (with group commit) when it ends."""

    __slots__ = ("_batch", "_first", "_store")

    def __init__(self, store: SQLiteWrites) -> None:
        self._store = store
        self._batch: _Batch | None = None
        self._first = True

    def __enter__(self) -> SQLiteTx:
        store = self._store
        with store._waiting_lock:
            store._waiting += 1
        store._lock.acquire()
        with store._waiting_lock:
            store._waiting -= 1
        try:
            store._ensure_open()
            batch = self._batch = store._join_batch(None)
            connection = store._connection
            self._first = batch.size == 0
            if not self._first:
                connection.execute("SAVEPOINT signoff_write")
        except BaseException as exc:
            self._end()
            if isinstance(exc, sqlite3.Error):
                raise sqlite_error(exc, "the write failed") from exc
            raise
        store._local.writing = True
        return SQLiteTx(connection, store._queries, store._plans)

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        store = self._store
        batch = self._batch
        assert batch is not None
        store._local.writing = False
        try:
            if error is None:
                try:
                    if not self._first:
                        store._connection.execute("RELEASE signoff_write")
                except sqlite3.Error as exc:
                    self._undo(batch, exc)
                    raise sqlite_error(exc, "the write failed") from exc
                batch.size += 1
            else:
                self._undo(batch, error)
                if isinstance(error, sqlite3.Error):
                    raise sqlite_error(error, "the write failed") from error
                return  # the body's own error goes on as it was
        finally:
            self._end()
        batch.wait()
        if batch.error is not None:
            raise _again(batch.error)

    def _undo(self, batch: _Batch, error: BaseException) -> None:
        """The failed writer's work undone: the whole transaction when it was the batch's first."""
        store = self._store
        if self._first:
            store._roll_back()
            store._finish(batch)
        else:
            store._undo(batch, error)

    def _end(self) -> None:
        """Commit unless more writers are about to join; let the next writer in."""
        store = self._store
        try:
            store._commit_if_last()
        finally:
            store._lock.release()


class TransactionScope(WriteScope):
    """`WriteScope` with the requests it changed, whose waiters are woken once it has committed
    (`StoreCore._transaction`)."""

    __slots__ = ("_changes",)

    def __init__(self, store: SQLiteWrites) -> None:
        super().__init__(store)
        self._changes = Changes()

    def __enter__(self) -> tuple[SQLiteTx, Changes]:  # type: ignore[override]
        return super().__enter__(), self._changes

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        super().__exit__(kind, error, trace)
        if error is None and self._changes.request_ids:
            self._store._committed(self._changes.request_ids)
