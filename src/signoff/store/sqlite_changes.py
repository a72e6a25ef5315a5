"""Noticing other processes' commits to a SQLite store: one thread, only while somebody in this
process is waiting, checks `PRAGMA data_version` whenever the kernel says the database's WAL was
written (every commit writes it), and polls every few milliseconds where the kernel cannot say
(`file_writes`). What changed is read from the audit log after the last entry seen (by its key),
so a look costs the same for one waiter as for ten thousand. A notice is only a hint: the
data_version check and the log stay the truth, and a slow look runs even when no notice comes."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from pathlib import Path

from .file_writes import FileWrites
from .wakeup import ANY, WakeupHub

log = logging.getLogger("signoff.store")
FILE_NOTICES = True
"""Wait for the kernel's notices of writes to the WAL where it gives them (off: poll only)."""
SAFETY_INTERVAL = 0.5
"""With notices: seconds between looks when none comes (a lost notice costs at most this)."""
IN_FLIGHT_SECONDS = 0.5
"""After a notice: how long the commit that wrote the WAL may take to show (its fsync runs after
the write the notice reports), looked for again and again meanwhile."""
SEEN_SECONDS = 0.02
"""The same once a change was seen since the notice (another commit's write may have shared it)."""
RECHECK_FIRST = 0.00025
RECHECK_SHARE = 0.25
RECHECK_LONGEST = 0.01
"""The gap between those looks: this share of the time since the notice, within these bounds, so
a commit shows at most about a quarter of its own fsync late."""
CHANGE_CHECK_INTERVAL = 0.003
"""Without notices: seconds between `PRAGMA data_version` checks while somebody waits for a
request and other processes' changes keep coming (within `BUSY_SECONDS` of the last one)."""
QUIET_CHECK_INTERVAL = 0.025
"""The same once `BUSY_SECONDS` have passed without any: an idle process checks 40 times a second."""
BUSY_SECONDS = 1.0
ANY_CHECK_INTERVAL = 0.02
"""The same while only `ANY` is watched (a server's event feed, which this process's own
commits wake at once): other processes' changes reach it within this."""
CHANGES_PAGE = 1000
"""Log entries read per look; a look that finds more wakes every waiter instead."""


class ChangeWatcher:
    """Wakes `hub`'s waiters on requests other processes' commits changed."""

    def __init__(self, hub: WakeupHub, queries: dict[str, str]) -> None:
        self.hub = hub
        self._queries = queries
        self.looks = 0
        """`PRAGMA data_version` checks made (what an idle watcher must not spend)."""
        self.notices = 0
        """Waits that a write to the WAL ended."""
        self.writes: FileWrites | None = None
        """The WAL's write notices; None while polling."""
        self._stopping = False
        self._version = 0
        self._seq = 0
        self._last_change = 0.0
        self._noticed = 0.0
        self._in_flight_until = 0.0
        self._notices_tried = 0.0
        self._wal: Path | None = None

    def change_point(self, connection: sqlite3.Connection) -> tuple[int, int]:
        """The connection's data_version and the audit log's last entry, read together."""
        version = connection.execute("PRAGMA data_version").fetchone()[0]
        head = connection.execute(self._queries["audit_head"]).fetchone()
        return int(version), int(head[0]) if head is not None else 0

    def stop_waiting(self) -> None:
        self._stopping = True
        if self.writes is not None:
            self.writes.interrupt()

    def watch(self, stop: threading.Event, connection: sqlite3.Connection, version: int, seq: int) -> None:
        """While anybody waits: a `data_version` check after each write to the WAL (or each
        interval); when another connection has committed, the log entries since the last one
        seen name the requests to wake. The notices start before the first check, so a commit
        is either seen by it or noticed after it."""
        self._version, self._seq = version, seq
        self.hub.attach(self)
        try:
            self._wal = wal_of(connection)
            self._watch_wal()
            while not (stop.is_set() or self._stopping):
                if not self.hub.wait_for_watchers(0.5):
                    continue
                try:
                    self._look(connection)
                except sqlite3.Error:
                    if stop.is_set() or self._stopping:
                        return
                    log.exception("could not look for other processes' changes; every waiter looks again")
                    self.hub.fire([ANY, *self.hub.watched()])
                    stop.wait(0.5)
                    continue
                self._wait_for_change(stop)
        finally:
            connection.close()
            if self.writes is not None:
                self.writes.close()

    def _look(self, connection: sqlite3.Connection) -> None:
        self.looks += 1
        current = connection.execute("PRAGMA data_version").fetchone()[0]
        if current != self._version:
            self._version = current
            self._seq = self._wake_changed(connection, self._seq)
            self._last_change = time.monotonic()
            self._in_flight_until = min(self._in_flight_until, self._last_change + SEEN_SECONDS)

    def _watch_wal(self) -> None:
        self._notices_tried = time.monotonic()
        if FILE_NOTICES and self._wal is not None:
            self.writes = FileWrites.watch(self._wal)

    def _wait_for_change(self, stop: threading.Event) -> None:
        writes = self.writes
        if writes is None or (writes.lost and not writes.rewatch()):
            self._poll_wait(stop)
            return
        now = time.monotonic()
        in_flight = now < self._in_flight_until
        gap = (now - self._noticed) * RECHECK_SHARE
        timeout = min(RECHECK_LONGEST, max(RECHECK_FIRST, gap)) if in_flight else SAFETY_INTERVAL
        if writes.wait(timeout):
            self.notices += 1
            self._noticed = time.monotonic()
            self._in_flight_until = self._noticed + IN_FLIGHT_SECONDS
        elif not in_flight:
            writes.rewatch()  # the WAL replaced by another file: watch that one

    def _poll_wait(self, stop: threading.Event) -> None:
        """No notices (none here, or the WAL is absent now): the next check after an interval,
        and another try at notices every `SAFETY_INTERVAL`."""
        if self.writes is None and time.monotonic() - self._notices_tried > SAFETY_INTERVAL:
            self._watch_wal()
        if self.hub.watches_requests():
            busy = time.monotonic() - self._last_change < BUSY_SECONDS
            stop.wait(CHANGE_CHECK_INTERVAL if busy else QUIET_CHECK_INTERVAL)
        else:
            self.hub.pause(ANY_CHECK_INTERVAL)

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


def wal_of(connection: sqlite3.Connection) -> Path | None:
    """The WAL file of the connection's main database (None for a temporary one)."""
    try:
        database = connection.execute("PRAGMA database_list").fetchone()[2]
    except sqlite3.Error:
        return None
    return Path(f"{database}-wal") if database else None
