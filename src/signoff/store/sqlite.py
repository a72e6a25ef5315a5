"""The embedded SQLite store: one file, WAL, `synchronous=FULL`, `BEGIN IMMEDIATE` for writes.

Writes (with group commit) are `sqlite_writes`; each thread reads through a connection of its
own (`sqlite_connection`); other processes' commits wake this process's waiters through
`sqlite_changes`; the schema is migrated by `sqlite_migrations`.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..decisions import Decision
from ..errors import StoreError
from ..requests import Request, request_from_record
from .base import Store
from .core import BackgroundThread, Tx
from .disk import DiskSpace, disk_space_of
from .failures import sqlite_error
from .queries import load_queries
from .rule_memo import rule_of_text
from .sqlite_changes import ChangeWatcher
from .sqlite_connection import connect, translated
from .sqlite_migrations import apply_migrations
from .sqlite_subscribers import SubscribedEvents
from .sqlite_tx import RowPlan, SQLiteTx
from .sqlite_writes import SQLiteWrites, ThreadState
from .wakeup import WakeupHub


class SQLiteStore(SQLiteWrites, Store):
    """`SQLiteStore("path/to/signoff.db")`. Safe to share between threads and processes."""

    groups_writes = True

    def __init__(self, path: str | Path, *, migrate: bool = True) -> None:
        self.path = str(path)
        if self.path == ":memory:" or self.path.startswith("file::memory:"):
            raise StoreError("signoff needs a database file (other connections and processes must see it)")
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self.url = f"sqlite:///{Path(self.path).resolve()}"
        self.hub = WakeupHub()
        self._queries = load_queries("sqlite")
        self._plans: dict[str, RowPlan] = {}
        self._lock = threading.RLock()
        try:
            self._connection = connect(self.path)
        except sqlite3.Error as exc:
            raise sqlite_error(exc, f"cannot open SQLite database {self.path}") from None
        self._broken = False
        """The write connection could not even roll back: replace it before the next write."""
        self._local = ThreadState()
        self._readers: list[sqlite3.Connection] = []
        self._reading: set[sqlite3.Connection] = set()  # readers inside a read now
        self._readers_lock = threading.Lock()
        self._batch = None
        self.commits = 0
        """Commits made so far; concurrent writers share them (group commit)."""
        self._waiting = 0
        self._waiting_lock = threading.Lock()
        self._subscribed = SubscribedEvents()
        self._source: BackgroundThread | None = None
        self._source_lock = threading.Lock()
        self._closed = False
        if migrate:
            self.migrate()

    def disk_space(self) -> DiskSpace:
        """The free space of the filesystem the database file (and its WAL) is on."""
        return disk_space_of(Path(self.path).resolve().parent)

    @contextmanager
    def _read(self) -> Iterator[SQLiteTx]:
        """Reads go through a connection of the calling thread's own, so that they never wait
        for a writer's commit (WAL lets readers and the writer proceed together); inside this
        thread's write transaction they go through it, to see its changes. A reader connection
        that meets an error is closed: the thread's next read opens a fresh one."""
        if self._local.writing or self._local.group is not None:
            try:
                yield SQLiteTx(self._connection, self._queries, self._plans)
            except sqlite3.Error as exc:
                raise sqlite_error(exc, "the read failed") from exc
            return
        self._ensure_open()
        reader: sqlite3.Connection | None = None
        try:
            reader = self._reader()
            yield SQLiteTx(reader, self._queries, self._plans)
        except sqlite3.Error as exc:
            if reader is not None:
                self._drop_reader(reader)
                reader = None
            raise sqlite_error(exc, "the read failed") from exc
        finally:
            if reader is not None:
                self._end_read(reader)

    def _reader(self) -> sqlite3.Connection:
        """This thread's reader, marked as reading: `close()` from another thread leaves it to
        this thread to close (closing a connection while a query runs on it crashes the process)."""
        reader = self._local.reader
        if reader is None:
            reader = connect(self.path, writer=False)
            self._local.reader = reader
        with self._readers_lock:
            if self._closed:
                self._local.reader = None
                reader.close()
                self._ensure_open()  # raises: the store was closed meanwhile
            if reader not in self._readers:
                self._readers.append(reader)
            self._reading.add(reader)
        return reader

    def _end_read(self, reader: sqlite3.Connection) -> None:
        with self._readers_lock:
            self._reading.discard(reader)
            closed = self._closed
        if closed:
            self._drop_reader(reader)

    def _drop_reader(self, reader: sqlite3.Connection) -> None:
        self._local.reader = None
        with self._readers_lock:
            self._reading.discard(reader)
            if reader in self._readers:
                self._readers.remove(reader)
        with contextlib.suppress(sqlite3.Error):
            reader.close()

    def _decide_at_once(
        self, request_id: str, decision: Decision, *, actor: str, channel: str, on_behalf: bool
    ) -> tuple[bool, Request] | None:
        # the writer's own connection reads the request: its pages are in its cache, where a
        # reader connection drops its cache after every commit it did not make
        return self._decide_in_one_write(
            request_id, decision, actor=actor, channel=channel, on_behalf=on_behalf
        )

    def _request_in_write(self, tx: Tx, request_id: str) -> Request | None:
        # the rule as its stored text: most requests carry one of a few rules, each parsed once
        assert isinstance(tx, SQLiteTx)
        row = tx.one_keeping("get_request", "rule", id=request_id)
        if row is None:
            return None
        rule = rule_of_text(row["rule"])
        approvals: tuple[str, ...] = ()
        if rule.quorum > 1:
            approvals = tuple(voter["actor"] for voter in tx.all("approvals_for", request_id=request_id))
        return request_from_record(row, approvals, rule=rule)

    # -- migrations ---------------------------------------------------------------------------

    def migrate(self) -> list[str]:
        """Apply the migrations this database lacks, in order. Returns their names.

        Foreign keys are off while they run (a migration that rebuilds a table must not cascade
        its drop into the tables that reference it) and checked before each one commits."""
        with self._lock, translated("cannot migrate the database"):
            return apply_migrations(self._connection, self._roll_back)

    # -- cross-process wake-ups ---------------------------------------------------------------

    def _start_wakeup_source(self) -> None:
        if self._source is None:
            with self._source_lock:
                if self._source is None and not self._closed:
                    # The starting point is taken before the first subscriber reads its request,
                    # so a change committed after that read is never missed.
                    connection = connect(self.path, writer=False)
                    watcher = ChangeWatcher(self.hub, self._queries)
                    version, seq = watcher.change_point(connection)
                    self._source = BackgroundThread(
                        "signoff-sqlite-changes",
                        lambda stop: watcher.watch(stop, connection, version, seq),
                    )

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._source is not None:
            self.hub.wake_sources()
            self._source.stop()
        with self._lock:
            if self._batch is not None:  # writers waiting for their group's commit get it
                self._commit(self._batch)
            self._connection.close()
        with self._readers_lock:
            for reader in self._readers:
                if reader not in self._reading:  # one inside a read is closed by its thread
                    reader.close()
            self._readers.clear()
