"""Listings at scale: the inbox, the history and the nav badge with 1,000,000 stored requests.

    .venv/bin/python bench/scale.py [--quick] [--no-postgres] [--dsn DSN] [--requests N] [--rebuild]

Prints one table (each listing for each kind of viewer: p50 and p99 now, and the query from
before on the same data) and writes bench/results/scale.json.

The database: N requests (1,000,000; --quick 100,000) over 180 days, written in the shape the
store had before listings read index ranges, then opened by the store, which migrates it (the
migration's time is reported); PostgreSQL's is analysed (as autovacuum would), SQLite's is
left without statistics (as signoff leaves it). The mix: 30 tools, 20 agents, 8 groups, 40
members; 8% of requests name no approver (the older ones, from before rules named approvers),
a quarter name alice, the rest one member, one group or both; 0.5% are open (pending or
drafting), nearly all among the newest, and alice has only a handful of them. The built
database is kept for the next run: SQLite in bench/.cache/, PostgreSQL as a schema of its own
(`--rebuild` makes them again; they are remade by themselves when the generator or the
migrations change). PostgreSQL: the DSN defaults to $SIGNOFF_BENCH_POSTGRES_DSN, then
$SIGNOFF_TEST_POSTGRES_DSN, then the local test server.

Who asks: an admin (sees everything); newbie, a member named on no request and in no group
(sees what names nobody); alice, named on 250,000 requests, nearly all decided; olga, in two
groups; agent-07, an agent (sees only what it created: the `created_by` filter). What is
asked, through the store as the server asks it (`Store.list_requests`, rows decoded into
requests): the inbox's first page (open requests, 51 rows: a page and one to know there is
more), the nav badge (`count_waiting`), the history's first page, a later page (the cursor
half way back in time), the history of one status, and the history narrowed by a tool (a common
one, a rare one, and one 90 days back), an agent or an app, and one app's inbox
(scale_asks.FILTERED). Beside them, without targets: a text
search, and the overview's open counts. Every sample set is taken in rounds (each query once
per round) so that the machine's noise falls on all of them alike.

"Before" runs the query this version replaced, on the same database and through the same
connection and row decoding: warm, a few times each (it takes up to seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from core import (
    LOCAL_DSN,
    Metric,
    Report,
    Target,
    machine_info,
    percentile,
    postgres_unavailable,
    progress,
)
from scale_asks import VIEWERS, Query, extras_for, install_before, queries_for
from scale_data import DAYS, Built, build_postgres, build_sqlite, request_id
from signoff.store import Store

HERE = Path(__file__).resolve().parent
RESULTS_PATH = HERE / "results" / "scale.json"
P99_TARGET_MS = 20.0
TABLE_WIDTH = 140


@dataclass(frozen=True)
class Sizes:
    requests: int
    samples: int
    extra_samples: int
    before_samples: int


FULL = Sizes(requests=1_000_000, samples=200, extra_samples=30, before_samples=5)
QUICK = Sizes(requests=100_000, samples=30, extra_samples=5, before_samples=2)


# -- measuring --------------------------------------------------------------------------------


@dataclass
class Timings:
    now_ms: list[float] = field(default_factory=list)
    now_cpu_ms: list[float] = field(default_factory=list)
    before_ms: list[float] = field(default_factory=list)


def timed(run: Callable[[Store], object], store: Store) -> float:
    started = time.perf_counter()
    run(store)
    return (time.perf_counter() - started) * 1000


def timed_both(run: Callable[[Store], object], store: Store) -> tuple[float, float]:
    """Wall and this thread's CPU time (SQLite's work is all in this thread: what the listing
    costs, whatever else the shared machine runs meanwhile), in ms."""
    started, started_cpu = time.perf_counter(), time.thread_time()
    run(store)
    return (time.perf_counter() - started) * 1000, (time.thread_time() - started_cpu) * 1000


def in_rounds(
    store: Store, queries: dict[tuple[str, str], Query], samples: int
) -> dict[tuple[str, str], Timings]:
    timings = {key: Timings() for key in queries}
    for query in queries.values():  # warm-up
        query.run(store)
    for _ in range(samples):
        for key, query in queries.items():
            wall, cpu = timed_both(query.run, store)
            timings[key].now_ms.append(wall)
            timings[key].now_cpu_ms.append(cpu)
    return timings


def measure(
    built: Built, sizes: Sizes
) -> tuple[dict[tuple[str, str], Query], dict[tuple[str, str], Timings]]:
    store = built.store
    install_before(store)
    middle = request_id(datetime.now(UTC) - timedelta(days=DAYS / 2), 0)
    main = {(viewer.key, query.key): query for viewer in VIEWERS for query in queries_for(viewer, middle)}
    extras = {(viewer.key, query.key): query for viewer in VIEWERS for query in extras_for(viewer)}
    progress(f"{built.described}: {len(main)} listings x {sizes.samples} rounds")
    timings = in_rounds(store, main, sizes.samples)
    progress(f"{built.described}: {len(extras)} more x {sizes.extra_samples} rounds")
    timings.update(in_rounds(store, extras, sizes.extra_samples))
    progress(f"{built.described}: the query from before, {sizes.before_samples} rounds")
    before = {key: query for key, query in main.items() if query.before is not None}
    for _ in range(sizes.before_samples):
        for key, query in before.items():
            assert query.before is not None
            timings[key].before_ms.append(timed(query.before, store))
    return {**main, **extras}, timings


# -- reporting --------------------------------------------------------------------------------


def report_dialect(
    report: Report,
    built: Built,
    dialect: str,
    queries: dict[tuple[str, str], Query],
    timings: dict[tuple[str, str], Timings],
) -> None:
    section = built.described
    for (viewer_key, query_key), query in queries.items():
        viewer = next(viewer for viewer in VIEWERS if viewer.key == viewer_key)
        found = timings[(viewer_key, query_key)]
        details: dict[str, Any] = {
            "samples": len(found.now_ms),
            "p50_ms": percentile(found.now_ms, 0.5),
            "max_ms": max(found.now_ms),
        }
        if dialect == "sqlite":
            details.update(
                cpu_p50_ms=percentile(found.now_cpu_ms, 0.5), cpu_p99_ms=percentile(found.now_cpu_ms, 0.99)
            )
        if found.before_ms:
            details.update(
                before_samples=len(found.before_ms),
                before_p50_ms=percentile(found.before_ms, 0.5),
                before_max_ms=max(found.before_ms),
            )
        report.add(
            Metric(
                section,
                f"{dialect}_{viewer_key}_{query_key}_p99",
                f"{viewer.label}: {query.label}",
                percentile(found.now_ms, 0.99),
                "ms",
                Target("<=", P99_TARGET_MS) if query.target else None,
                details,
            )
        )
    if built.migrate_seconds is not None:
        report.add(
            Metric(
                section,
                f"{dialect}_migration_seconds",
                "the listing migration on these requests (once, when built)",
                built.migrate_seconds,
                "s",
            )
        )


def print_table(report: Report, title: str) -> None:
    rows = []
    for metric in report.metrics:
        details = metric.details
        if metric.unit != "ms":
            rows.append((metric.section, metric.label, f"{metric.value:.0f} s", "", "", "", "", ""))
            continue
        before = f"{details['before_p50_ms']:,.1f} ms" if "before_p50_ms" in details else ""
        target = f"≤ {metric.target.value:g} ms" if metric.target else ""
        met = {None: "", True: "met", False: "MISSED"}[metric.met]
        rows.append(
            (
                metric.section,
                metric.label,
                f"{details['p50_ms']:.2f} ms",
                f"{metric.value:.2f} ms",
                f"{details['cpu_p99_ms']:.2f} ms" if "cpu_p99_ms" in details else "",
                target,
                met,
                before,
            )
        )
    header = ("Database", "Who: what", "p50", "p99", "CPU p99", "Target", "Met", "Before (p50)")
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        widths = [max(len(row[column]) for row in [header, *rows]) for column in range(len(header))]
        print(title)
        for row in [header, *rows]:
            print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
        for note in report.notes:
            print(f"* {note}")
        return
    table = Table(title=title)
    for column in header:
        table.add_column(column, justify="left" if column in ("Database", "Who: what") else "right")
    previous = None
    for row in rows:
        if previous is not None and row[0] != previous:
            table.add_section()
        cells = list(row)
        if cells[6] == "MISSED":
            cells[6] = "[bold red]MISSED[/]"
        elif cells[6] == "met":
            cells[6] = "[green]met[/]"
        table.add_row(row[0] if row[0] != previous else "", *cells[1:])
        previous = row[0]
    console = Console()
    if not console.is_terminal:
        console = Console(width=TABLE_WIDTH)
    console.print(table)
    for note in report.notes:
        console.print(f"• {note}", highlight=False)


def write_results(report: Report, machine: dict[str, Any], quick: bool, count: int, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": sys.version,
        "quick": quick,
        "requests": count,
        "machine": machine,
        "metrics": [metric.to_dict() for metric in report.metrics],
        "notes": report.notes,
    }
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


# -- main -------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="100,000 requests and fewer rounds: a smoke run")
    parser.add_argument("--requests", type=int, help="how many requests to store (default 1,000,000)")
    parser.add_argument(
        "--rebuild", action="store_true", help="build the databases again, not from the cache"
    )
    parser.add_argument("--no-postgres", action="store_true", help="skip PostgreSQL")
    parser.add_argument(
        "--dsn",
        default=os.environ.get("SIGNOFF_BENCH_POSTGRES_DSN")
        or os.environ.get("SIGNOFF_TEST_POSTGRES_DSN")
        or LOCAL_DSN,
        help="PostgreSQL to measure (a schema of its own is made and kept for the next run)",
    )
    parser.add_argument("--output", type=Path, default=RESULTS_PATH, help="where to write the JSON results")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    options = parse_args(argv)
    sizes = QUICK if options.quick else FULL
    count = options.requests or sizes.requests
    skipped = (
        "PostgreSQL skipped: --no-postgres" if options.no_postgres else postgres_unavailable(options.dsn)
    )
    machine = machine_info(None if skipped else options.dsn)
    started = time.monotonic()
    report = Report()
    builders: list[tuple[str, Callable[[], Built]]] = [
        ("sqlite", lambda: build_sqlite(count, options.rebuild))
    ]
    if not skipped:
        builders.append(("postgres", lambda: build_postgres(options.dsn, count, options.rebuild)))
    for dialect, build in builders:
        built = build()
        try:
            queries, timings = measure(built, sizes)
        finally:
            built.store.close()
        report_dialect(report, built, dialect, queries, timings)
    if skipped:
        report.notes.append(skipped)
    report.notes.append(
        f"p50/p99 over {sizes.samples} rounds ({sizes.extra_samples} for the rows without a target), "
        "through Store.list_requests with rows decoded, wall time; on SQLite also the thread's CPU time "
        "(all of SQLite's work: what a listing costs when the shared machine's load is set aside); "
        "'before' is the query this version replaced, "
        f"on the same data, warm, {sizes.before_samples} rounds."
    )
    report.notes.append(f"Finished in {time.monotonic() - started:.0f} s; results in {options.output}.")
    mode = "quick" if options.quick else "full"
    print_table(report, f"signoff listings at scale ({mode} run, {machine['cpu_count']} cores)")
    write_results(report, machine, options.quick, count, options.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
