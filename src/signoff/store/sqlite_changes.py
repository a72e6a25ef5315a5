"""Noticing other processes' commits to a SQLite store: one thread checks `PRAGMA data_version`
every few milliseconds, and only while somebody in this process is waiting; what changed is read
from the audit log after the last entry seen (by its key), so a look costs the same for one
waiter as for ten thousand."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time

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


class ChangeWatcher:
    """Wakes `hub`'s waiters on requests other processes' commits changed."""

    def __init__(self, hub: WakeupHub, queries: dict[str, str]) -> None:
        self.hub = hub
        self._queries = queries

    def change_point(self, connection: sqlite3.Connection) -> tuple[int, int]:
        """The connection's data_version and the audit log's last entry, read together."""
        version = connection.execute("PRAGMA data_version").fetchone()[0]
        head = connection.execute(self._queries["audit_head"]).fetchone()
        return int(version), int(head[0]) if head is not None else 0

    def watch(self, stop: threading.Event, connection: sqlite3.Connection, version: int, seq: int) -> None:
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
