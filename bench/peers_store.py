"""Store against the peers: create + decide cycles/s. signoff on SQLite at `synchronous=FULL` (its
setting) and `NORMAL` (holdpoint's, so the two are compared at equal durability), holdpoint (a
guarded call queued, then approved without running: the agent runs it, as with signoff), and the
raw driver doing the same two transactions with the same rows, the request and each transaction's
audit entry in a hash chain (the ceiling: bench/raw_cycles.py). All sides run in turns (A B C,
C B A, ...), each ratio is taken round by round."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core import EMAIL_ARGS, Target, alternate, drop_schema, postgres_cycles, progress, signoff_cycle
from peers_common import Row, Section, Sizes, Spread, ratio
from peers_deciders import open_holdpoint
from raw_cycles import open_raw_sqlite, raw_sqlite_cycle
from signoff.store import SQLiteStore

SIGNOFF_FULL = "signoff SQLite (synchronous=FULL)"
SIGNOFF_NORMAL = "signoff SQLite (synchronous=NORMAL)"
HOLDPOINT = "holdpoint SQLite (synchronous=NORMAL, its setting)"
RAW_FULL = "raw sqlite3 (synchronous=FULL)"
RAW_NORMAL = "raw sqlite3 (synchronous=NORMAL)"
SIGNOFF_POSTGRES = "signoff PostgreSQL"
RAW_POSTGRES = "raw psycopg"
AT_LEAST_HOLDPOINT = Target(">=", 1.0)
HALF_OF_RAW = Target(">=", 0.5)
RATIOS = (
    (SIGNOFF_NORMAL, HOLDPOINT, AT_LEAST_HOLDPOINT),
    (SIGNOFF_FULL, HOLDPOINT, None),
    (SIGNOFF_FULL, RAW_FULL, HALF_OF_RAW),
    (SIGNOFF_NORMAL, RAW_NORMAL, HALF_OF_RAW),
    (SIGNOFF_POSTGRES, RAW_POSTGRES, HALF_OF_RAW),
)
"""(numerator, denominator, target) of cycles/s."""
KINDS = {HOLDPOINT: "peer", RAW_FULL: "ceiling", RAW_NORMAL: "ceiling", RAW_POSTGRES: "ceiling"}


class CpuCounted:
    """A cycle that also adds up the CPU time it takes in this thread (time.thread_time_ns)."""

    def __init__(self, cycle: Callable[[int], None]) -> None:
        self.cycle = cycle
        self.cpu_ns = 0
        self.count = 0

    def __call__(self, index: int) -> None:
        start = time.thread_time_ns()
        self.cycle(index)
        self.cpu_ns += time.thread_time_ns() - start
        self.count += 1

    @property
    def cpu_us_per_cycle(self) -> float:
        return self.cpu_ns / max(self.count, 1) / 1000


def holdpoint_cycle(path: Path) -> Callable[[int], None]:
    hold, guarded = open_holdpoint(str(path))

    def cycle(_: int) -> None:
        action = guarded(**EMAIL_ARGS)
        hold.approve(action.id, actor="alice", execute=False)

    return cycle


def normal_sync(connection: Any) -> None:
    connection.execute("PRAGMA synchronous = NORMAL")


def sqlite_sides(workdir: Path) -> tuple[dict[str, Callable[[int], None]], list[Any]]:
    """The SQLite sides, and what to close afterwards."""
    full = SQLiteStore(workdir / "store-full.db")
    normal = SQLiteStore(workdir / "store-normal.db")
    # signoff has no setting for this (FULL is its promise); the bench switches its writer connection
    normal_sync(normal._connection)
    raw_full = open_raw_sqlite(workdir / "raw-full.db")
    raw_normal = open_raw_sqlite(workdir / "raw-normal.db")
    normal_sync(raw_normal)
    sides = {
        SIGNOFF_FULL: signoff_cycle(full),
        SIGNOFF_NORMAL: signoff_cycle(normal),
        HOLDPOINT: holdpoint_cycle(workdir / "store-holdpoint.db"),
        RAW_FULL: raw_sqlite_cycle(raw_full),
        RAW_NORMAL: raw_sqlite_cycle(raw_normal),
    }
    return sides, [full, normal, raw_full, raw_normal]


def measure_store(workdir: Path, sizes: Sizes, dsn: str | None) -> Section:
    section = Section("store", "Store: create + decide cycles per second")
    progress("peers: store cycles, SQLite")
    sides, opened = sqlite_sides(workdir)
    counted = {label: CpuCounted(cycle) for label, cycle in sides.items()}
    try:
        rates = alternate(dict(counted), sizes.store_cycles, sizes.store_rounds)
    finally:
        for each in opened:
            each.close()
    if dsn is not None:
        progress("peers: store cycles, PostgreSQL")
        rates.update(postgres_rates(dsn, sizes, counted))
    rows = {
        label: Row(
            label,
            KINDS.get(label, "signoff"),  # type: ignore[arg-type]
            "cycles/s",
            Spread.of(values),
            {"cpu_us_per_cycle": counted[label].cpu_us_per_cycle},
            values,
        )
        for label, values in rates.items()
    }
    section.rows = list(rows.values())
    for numerator, denominator, target in RATIOS:
        if numerator in rows and denominator in rows:
            section.ratios.append(ratio(f"{numerator} / {denominator}", rows, numerator, denominator, target))
    section.notes.append(
        f"{sizes.store_rounds} rounds of {sizes.store_cycles} cycles per side, in turns, after a warm-up; "
        "files on this machine's disk, WAL. signoff's cycle is create_request + decide(approve), each its "
        "own transaction with its audit entries; holdpoint's is a guarded call queued + approve(execute="
        "False); the raw driver's is the same two transactions written by hand (bench/raw_cycles.py): the "
        "request row in a table of signoff's shape (its columns, unique key and listing indexes), and "
        "in each transaction its audit entry appended to a hash chain as signoff's (head row read, "
        "sha256(seq|prev_hash|payload), entry inserted, head moved); without signoff's guard "
        "triggers, outbox, savepoints or checks. (Results from before 3 December 2026 had the raw side "
        "write the request row only, no audit entry: their ratios are not comparable with these.) "
        "CPU µs per cycle: this thread's CPU time over every cycle of the side (warm-up included), what "
        "the side costs beside waiting on the disk or the server."
    )
    return section


def postgres_rates(dsn: str, sizes: Sizes, counted: dict[str, CpuCounted]) -> dict[str, list[float]]:
    schema = f"signoff_peers_{uuid.uuid4().hex[:12]}"
    try:
        with postgres_cycles(dsn, schema) as cycles:
            counted[SIGNOFF_POSTGRES] = CpuCounted(cycles["signoff"])
            counted[RAW_POSTGRES] = CpuCounted(cycles["raw"])
            sides: dict[str, Callable[[int], None]] = {
                label: counted[label] for label in (SIGNOFF_POSTGRES, RAW_POSTGRES)
            }
            return alternate(sides, sizes.store_cycles, sizes.store_rounds)
    finally:
        drop_schema(dsn, schema)
