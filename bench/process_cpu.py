"""A process's CPU use, read from /proc: its CPU seconds (all threads, or by thread name), the cores
it used over an idle window, and its PostgreSQL backends (found by its sockets' local ports) to
count theirs too."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, all its threads, from /proc."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def thread_cpu_seconds(pid: int) -> dict[str, float]:
    """User + system CPU time of a process's threads, summed by thread name (/proc/PID/task/*/comm;
    `main` for the main thread, which runs `signoff serve`'s event loop). Threads that ended are
    not counted. Names are only telling under `named_threads.py`."""
    seconds: dict[str, float] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = "main" if task.name == str(pid) else (task / "comm").read_text().strip()
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended meanwhile
            continue
        name = name.rstrip("_0123456789") or name  # a pool's threads count as one
        seconds[name] = seconds.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    return seconds


def local_ports(pid: int) -> set[int]:
    """The local TCP ports of a process's sockets (to find its PostgreSQL backends)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table, encoding="ascii") as lines:
            for line in list(lines)[1:]:
                parts = line.split()
                if parts[9] in inodes:
                    ports.add(int(parts[1].rsplit(":", 1)[1], 16))
    return ports


def postgres_backends(dsn: str, pid: int) -> list[int]:
    import psycopg

    ports = sorted(local_ports(pid))
    with psycopg.connect(dsn, autocommit=True) as connection:
        rows = connection.execute(
            "SELECT pid FROM pg_stat_activity WHERE client_port = ANY(%s)", (ports,)
        ).fetchall()
    return [row[0] for row in rows]


@dataclass
class Idle:
    cores: dict[str, float]
    """Cores used over the idle window, by process (waiters, server, postgres)."""


def measure_idle(pids: dict[str, list[int]], seconds: float) -> Idle:
    before = {name: sum(cpu_seconds(pid) for pid in group) for name, group in pids.items()}
    started = time.monotonic()
    time.sleep(seconds)
    elapsed = time.monotonic() - started
    after = {name: sum(cpu_seconds(pid) for pid in group) for name, group in pids.items()}
    return Idle({name: (after[name] - before[name]) / elapsed for name in pids})
