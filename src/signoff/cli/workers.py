"""`signoff serve --workers N`: N processes serving one port, on PostgreSQL.

The parent binds the port and prepares the database (rules, the first start, the announcement),
closes its store and forks the workers; each opens its own store (its own connection pool and
listening connection) and serves the app on the shared socket, where the kernel hands each new
connection to one of them. Each worker is a replica like any other: wake-ups and events reach
every worker through the database, and the sweeper and the outbox skip rows another holds. A
worker that dies is started again; SIGTERM or SIGINT to the parent stops them all. SQLite is
refused: it has one writer at a time, so more processes would only queue on its lock.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
from collections.abc import Callable
from types import FrameType

log = logging.getLogger("signoff.server")

QUICK_EXIT_SECONDS = 5.0
"""A worker that exits sooner than this after its start counts towards giving up."""
QUICK_EXITS_ALLOWED = 3
"""Workers that exit this many times in a row right after starting stop the server: they cannot start."""


def sqlite_refusal(workers: int) -> str:
    return (
        f"--workers {workers} needs PostgreSQL: SQLite takes one writer at a time, so more processes "
        "would only wait for each other's locks. Serve SQLite with one process, or give --db postgresql://…"
    )


def run_workers(count: int, serve_one: Callable[[], int]) -> int:
    """Fork `count` workers, each running `serve_one` (its exit code), and keep `count` running until
    SIGTERM or SIGINT; then stop them and return 0 (or the startup failure's code)."""
    children: dict[int, float] = {}
    """Each running worker's pid and when it started."""
    stopping = False
    quick_exits = 0
    failed_code = 0

    def spawn() -> None:
        pid = os.fork()
        if pid == 0:  # the worker
            code = 1
            try:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                code = serve_one()
            finally:
                os._exit(code)
        children[pid] = time.monotonic()

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(children):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        for _ in range(count):
            spawn()
        while children:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                break
            started = children.pop(pid, None)
            if started is None or stopping:
                continue
            code = os.waitstatus_to_exitcode(status)
            quick_exits = quick_exits + 1 if time.monotonic() - started < QUICK_EXIT_SECONDS else 0
            if quick_exits >= QUICK_EXITS_ALLOWED:
                log.error("workers keep exiting right after they start (last: %s); stopping", code)
                failed_code = code if code > 0 else 1
                stop(signal.SIGTERM, None)
                continue
            log.warning("worker %d exited (%s); starting another", pid, _how(code))
            spawn()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return failed_code


def _how(code: int) -> str:
    return f"killed by signal {-code}" if code < 0 else f"exit code {code}"
