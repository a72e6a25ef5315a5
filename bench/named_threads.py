"""`python bench/named_threads.py ARGS…` runs `python -m signoff.cli ARGS…` with each Python thread's
name given to its OS thread too (PR_SET_NAME, first 15 bytes), so that /proc/PID/task/*/comm tells
the event loop, the grouped writer, the change watcher and the pool's threads apart
(`process_cpu.thread_cpu_seconds`). Python 3.11 leaves every thread named after the program."""

from __future__ import annotations

import ctypes
import runpy
import sys
import threading
from typing import Any

PR_SET_NAME = 15
_libc = ctypes.CDLL(None, use_errno=True)
_bootstrap_inner: Any = threading.Thread._bootstrap_inner  # type: ignore[attr-defined]


def _named_bootstrap(self: threading.Thread) -> None:
    _libc.prctl(PR_SET_NAME, self.name.encode()[:15], 0, 0, 0)
    _bootstrap_inner(self)


if __name__ == "__main__":
    del sys.path[0]  # this folder: its modules (core, slack, …) must not shadow installed ones
    threading.Thread._bootstrap_inner = _named_bootstrap  # type: ignore[attr-defined]
    sys.argv = ["signoff", *sys.argv[1:]]
    runpy.run_module("signoff.cli", run_name="__main__", alter_sys=True)
