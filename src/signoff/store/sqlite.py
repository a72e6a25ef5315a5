"""The embedded SQLite store: one file, WAL, `synchronous=FULL`, `BEGIN IMMEDIATE` for writes.

Other processes' commits are noticed through `PRAGMA data_version`, checked every few
milliseconds by one thread, and only while somebody in this process is waiting; what changed is
read from the audit log after the last entry seen (by its key), so a look costs the same for
one waiter as for ten thousand.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from .._util import to_iso
from ..errors import MigrationError, StoreError, StoreUnavailable
from .base import Store
from .core import BackgroundThread
from .failures import sqlite_error
from .queries import load_queries, migration_files
from .sqlite_tx import RowPlan, SQLiteTx
from .wakeup import ANY, WakeupHub

log = logging.getLogger("signoff.store")
CHANGE_CHECK_INTERVAL = 0.003
"""Seconds between `PRAGMA data_version` checks while somebody waits for a request and other
processes' changes keep coming (within `BUSY_SECONDS` of the last one)."""
QUIET_CHECK_INTERVAL = 0.025
"""The same once `BUSY_SECONDS` have passed without any: an idle process checks 40 times a second."""
BUSY_SECONDS = 1.0
ANY_CHECK_INTERVAL = 0.02
"""The same while only `ANY` is watched (a server's event feed, which this process's own
commits wake at once): other processes' changes reach it within this."""
CHANGES_PAGE = 1000
"""Log entries read per look; a look that finds more wakes every waiter instead."""
BUSY_TIMEOUT_MS = 10_000
log = logging.getLogger("signoff.store")


def _sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _connect(path: str, *, writer: bool = True) -> sqlite3.Connection:
    connection = sqlite3.connect(
        path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000
    )
    connection.create_function("signoff_sha256", 1, _sha256_hex, deterministic=True)
    connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if not writer:
        connection.execute("PRAGMA foreign_keys = ON")
        return connection
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = FULL")
    connection.execute("PRAGMA foreign_keys = ON")
    return connection


MAX_GROUP_COMMIT = 64
"""At most this many writers share one commit."""


class _Batch:
    """Writers whose work waits in one open transaction for its commit."""

    def __init__(self) -> None:
        self.size = 0
        self.done = threading.Event()
        self.error: StoreError | None = None
        """Why its commit failed: none of its writers' work was kept."""


def _again(error: StoreError) -> StoreError:
    """A fresh copy of `error` for another thread to raise (one exception raised in several
    threads at once would share one traceback)."""
    fresh = type(error)(error.message)
    fresh.__cause__ = error.__cause__
    return fresh


@dataclass
class _Group:
    """What `grouped()` does once its commit succeeds."""

    changed: set[str] = field(default_factory=set)
    callbacks: list[Callable[[], None]] = field(default_factory=list)
    batch: _Batch | None = None
    """The transaction the group's writes went into."""


class SQLiteStore(Store):
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
            self._connection = _connect(self.path)
        except sqlite3.Error as exc:
            raise sqlite_error(exc, f"cannot open SQLite database {self.path}") from None
        self._broken = False
        """The write connection could not even roll back: replace it before the next write."""
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._batch: _Batch | None = None
        self.commits = 0
        """Commits made so far; concurrent writers share them (group commit)."""
        self._waiting = 0
        self._waiting_lock = threading.Lock()
        self._source: BackgroundThread | None = None
        self._source_lock = threading.Lock()
        self._closed = False
        if migrate:
            self.migrate()

    # -- transactions -------------------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[SQLiteTx]:
        """One write transaction, committed durably before this returns.

        Group commit: when other threads are already waiting to write, the transaction is kept
        open (each caller's work is a savepoint inside it) and the last writer of the group
        commits for all, so a burst of concurrent writes shares one fsync. Nobody returns before
        the commit that holds their work, and if that commit fails (a full disk), everyone in it
        gets the error (`StoreUnavailable`) and none of their work is kept.
        """
        if getattr(self._local, "writing", False):  # a write inside this thread's own write
            yield SQLiteTx(self._connection, self._queries, self._plans)
            return
        group: _Group | None = getattr(self._local, "group", None)
        if group is not None:  # grouped(): its end commits
            with self._translated("the write failed"):
                self._ensure_open()
                group.batch = self._join_batch(group.batch)
                with self._savepoint(group.batch) as tx:
                    yield tx
                group.batch.size += 1
            return
        with self._waiting_lock:
            self._waiting += 1
        self._lock.acquire()
        with self._waiting_lock:
            self._waiting -= 1
        try:
            with self._translated("the write failed"):
                self._ensure_open()
                batch = self._join_batch(None)
                with self._savepoint(batch) as tx:
                    yield tx
                batch.size += 1
        finally:
            try:
                self._commit_if_last()
            finally:
                self._lock.release()
        batch.done.wait()
        if batch.error is not None:
            raise _again(batch.error)

    @contextmanager
    def _translated(self, doing: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise sqlite_error(exc, doing) from exc

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
        """One writer's work inside the open transaction: undone alone if it fails."""
        connection = self._connection
        connection.execute("SAVEPOINT signoff_write")
        self._local.writing = True
        try:
            yield SQLiteTx(connection, self._queries, self._plans)
            connection.execute("RELEASE signoff_write")
        except BaseException as exc:
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
        batch.done.set()

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
        self._connection = _connect(self.path)
        self._broken = False

    @contextmanager
    def grouped(self) -> Iterator[None]:
        """Writes this thread makes inside share one commit, made when the block ends; others
        write after it. Reads inside see the block's own writes. A write inside returns before
        it is durable: tell nobody of it until the block has ended without error (a failed
        commit raises StoreError here, and none of the block's writes happened; once it has
        failed, the block's later writes fail too)."""
        if getattr(self._local, "group", None) is not None:
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
        group: _Group | None = getattr(self._local, "group", None)
        if group is not None:  # woken when the group commits
            group.changed.update(request_ids)
        else:
            self.hub.fire(request_ids)

    def on_commit(self, callback: Callable[[], None]) -> None:
        group: _Group | None = getattr(self._local, "group", None)
        if group is not None:
            group.callbacks.append(callback)
        else:
            callback()

    @contextmanager
    def _read(self) -> Iterator[SQLiteTx]:
        """Reads go through a connection of the calling thread's own, so that they never wait
        for a writer's commit (WAL lets readers and the writer proceed together); inside this
        thread's write transaction they go through it, to see its changes. A reader connection
        that meets an error is closed: the thread's next read opens a fresh one."""
        if getattr(self._local, "writing", False) or getattr(self._local, "group", None) is not None:
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
            raise sqlite_error(exc, "the read failed") from exc

    def _reader(self) -> sqlite3.Connection:
        reader: sqlite3.Connection | None = getattr(self._local, "reader", None)
        if reader is None:
            reader = _connect(self.path, writer=False)
            self._local.reader = reader
            with self._readers_lock:
                self._readers.append(reader)
        return reader

    def _drop_reader(self, reader: sqlite3.Connection) -> None:
        self._local.reader = None
        with self._readers_lock:
            if reader in self._readers:
                self._readers.remove(reader)
        with contextlib.suppress(sqlite3.Error):
            reader.close()

    def _ensure_open(self) -> None:
        if self._closed:
            raise StoreError("the store is closed")

    # -- migrations ---------------------------------------------------------------------------

    def migrate(self) -> list[str]:
        """Apply the migrations this database lacks, in order. Returns their names.

        Foreign keys are off while they run (a migration that rebuilds a table must not cascade
        its drop into the tables that reference it) and checked before each one commits."""
        applied: list[str] = []
        with self._lock, self._translated("cannot migrate the database"):
            self._connection.execute(
                "CREATE TABLE IF NOT EXISTS signoff_migrations "
                "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
            self._connection.execute("PRAGMA foreign_keys = OFF")
            try:
                self._apply_migrations(applied)
            finally:
                self._connection.execute("PRAGMA foreign_keys = ON")
        return applied

    def _apply_migrations(self, applied: list[str]) -> None:
        for version, name, sql in migration_files("sqlite"):
            self._connection.execute("BEGIN IMMEDIATE")
            try:
                done = self._connection.execute(
                    "SELECT 1 FROM signoff_migrations WHERE version = ?", (version,)
                ).fetchone()
                if done is None:
                    for statement in split_statements(sql):
                        self._connection.execute(statement)
                    broken = self._connection.execute("PRAGMA foreign_key_check").fetchone()
                    if broken is not None:
                        raise sqlite3.IntegrityError(f"it leaves a broken reference from table {broken[0]}")
                    self._connection.execute(
                        "INSERT INTO signoff_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                        (version, name, to_iso(datetime.now().astimezone())),
                    )
                self._connection.execute("COMMIT")
            except sqlite3.Error as exc:
                self._roll_back()
                error = sqlite_error(exc, f"migration {name} failed")
                if isinstance(error, StoreUnavailable):
                    raise error from exc
                raise MigrationError(f"migration {name} failed: {exc}") from None
            if done is None:
                applied.append(name)

    # -- cross-process wake-ups ---------------------------------------------------------------

    def _start_wakeup_source(self) -> None:
        if self._source is None:
            with self._source_lock:
                if self._source is None and not self._closed:
                    # The starting point is taken before the first subscriber reads its request,
                    # so a change committed after that read is never missed.
                    connection = _connect(self.path, writer=False)
                    version, seq = self._change_point(connection)
                    self._source = BackgroundThread(
                        "signoff-sqlite-changes",
                        lambda stop: self._watch_changes(stop, connection, version, seq),
                    )

    def _change_point(self, connection: sqlite3.Connection) -> tuple[int, int]:
        """The connection's data_version and the audit log's last entry, read together."""
        version = connection.execute("PRAGMA data_version").fetchone()[0]
        head = connection.execute(self._queries["audit_head"]).fetchone()
        return int(version), int(head[0]) if head is not None else 0

    def _watch_changes(
        self, stop: threading.Event, connection: sqlite3.Connection, version: int, seq: int
    ) -> None:
        """While anybody waits: one `data_version` check per interval; when another connection
        has committed, the log entries since the last one seen name the requests to wake."""
        last_change = 0.0
        try:
            while not stop.is_set():
                if not self.hub.wait_for_watchers(0.5):
                    continue
                try:
                    current = connection.execute("PRAGMA data_version").fetchone()[0]
                    if current != version:
                        version = current
                        seq = self._wake_changed(connection, seq)
                        last_change = time.monotonic()
                except sqlite3.Error:
                    if stop.is_set():
                        return
                    log.exception("could not look for other processes' changes; every waiter looks again")
                    self.hub.fire([ANY, *self.hub.watched()])
                    stop.wait(0.5)
                    continue
                if self.hub.watches_requests():
                    busy = time.monotonic() - last_change < BUSY_SECONDS
                    time.sleep(CHANGE_CHECK_INTERVAL if busy else QUIET_CHECK_INTERVAL)
                else:
                    self.hub.pause(ANY_CHECK_INTERVAL)
        finally:
            connection.close()

    def _wake_changed(self, connection: sqlite3.Connection, after: int) -> int:
        """Wake the waiters of requests with log entries after `after`; the last entry seen."""
        rows = connection.execute(
            self._queries["changes_after"], {"after": after, "limit": CHANGES_PAGE}
        ).fetchall()
        if not rows:
            return after
        if len(rows) == CHANGES_PAGE:  # far behind: everyone looks again, and the look goes on from the head
            head = connection.execute(self._queries["audit_head"]).fetchone()
            self.hub.fire([ANY, *self.hub.watched()])
            return int(head[0])
        self.hub.fire([ANY, *{request_id for _, request_id in rows if request_id is not None}])
        return int(rows[-1][0])

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
                reader.close()
            self._readers.clear()


def split_statements(script: str) -> list[str]:
    """Split a SQL script into complete statements (triggers' inner `;` included)."""
    statements: list[str] = []
    current: list[str] = []
    for line in script.splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("--")):
            continue
        current.append(line)
        text = "\n".join(current)
        if sqlite3.complete_statement(text):
            statements.append(text.strip())
            current = []
    if current and "\n".join(current).strip():
        statements.append("\n".join(current).strip())
    return statements
