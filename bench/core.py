"""Core benchmarks: the guard's fast path, store cycles/s against the raw drivers, wake-up latency.

    .venv/bin/python bench/core.py [--quick] [--no-postgres] [--dsn DSN]

Prints one table (measurement, value, target, met) and writes bench/results/core.json.

1. Fast path: a guarded call that needs no approval against the bare function, same loop, same
   run, alternating repetitions; medians of the per-call time.
2. Store cycles/s: create_request + decide(approve) against the raw driver doing the same two
   transactions with the same rows (bench/raw_cycles.py: the request and each transaction's audit
   entry in a hash chain) on tables of the same shape (SQLite: WAL,
   synchronous=FULL, file on disk; PostgreSQL: one connection). Rounds alternate the two sides
   (A B, B A, ...) so machine noise hits both; medians per side.
3. Wake-up latency: a waiter blocked in `gate.review`, the decision made by another thread
   (in-process) or another process (SQLite file, PostgreSQL). Latency is measured from
   `decide()` returning (its commit is done) to `review()` returning in the waiter, on
   CLOCK_MONOTONIC (`time.monotonic_ns`), which is system-wide on Linux; decide's own duration
   is reported beside it.

PostgreSQL: a fresh schema per run, dropped at the end. The DSN defaults to
$SIGNOFF_BENCH_POSTGRES_DSN, then $SIGNOFF_TEST_POSTGRES_DSN, then the local test server.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cycles import EMAIL_ARGS, alternate, postgres_cycles, signoff_cycle
from machine import git_commit, machine_info, package_version
from metrics import Metric, Report, Target, percentile
from output import LATENCY_BASIS, print_report, progress, write_results
from postgres_server import LOCAL_DSN, drop_schema, postgres_unavailable
from raw_cycles import open_raw_sqlite, raw_sqlite_cycle
from signoff import Gate, RuleSet, Scope
from signoff.store import SQLiteStore, Store
from wakeups import (
    ASK_RULES,
    RESUME_TIMEOUT,
    Decider,
    StoreSpec,
    WakeSample,
    decide_now,
    decider_in_other_process,
    deciding_process,
    one_wakeup,
    wait_until_watched,
)

__all__ = [  # what the other benches import from here (these names live in the modules above)
    "ASK_RULES",
    "EMAIL_ARGS",
    "LOCAL_DSN",
    "RESUME_TIMEOUT",
    "Metric",
    "Report",
    "StoreSpec",
    "Target",
    "alternate",
    "decide_now",
    "decider_in_other_process",
    "deciding_process",
    "drop_schema",
    "git_commit",
    "machine_info",
    "one_wakeup",
    "package_version",
    "percentile",
    "postgres_cycles",
    "postgres_unavailable",
    "print_report",
    "progress",
    "signoff_cycle",
    "wait_until_watched",
    "write_results",
]

RESULTS_PATH = Path(__file__).resolve().parent / "results" / "core.json"
FAST_PATH_OVERHEAD_TARGET_NS = 2000
CYCLES_RATIO_TARGET_PERCENT = 50
IN_PROCESS_P99_TARGET_MS = 5.0
WAKEUP_P99_TARGET_MS = {"sqlite": 50.0, "postgres": 20.0}
"""Across two processes, by backend."""


# -- sizes ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sizes:
    fast_path_calls: int
    fast_path_reps: int
    sqlite_cycles: int
    postgres_cycles: int
    cycle_rounds: int
    wakeups: int
    wakeup_warmups: int
    settle_seconds: float


FULL = Sizes(
    fast_path_calls=200_000,
    fast_path_reps=9,
    sqlite_cycles=300,
    postgres_cycles=200,
    cycle_rounds=12,
    wakeups=1000,
    wakeup_warmups=20,
    settle_seconds=0.01,
)
QUICK = Sizes(
    fast_path_calls=100_000,
    fast_path_reps=5,
    sqlite_cycles=200,
    postgres_cycles=150,
    cycle_rounds=4,
    wakeups=150,
    wakeup_warmups=10,
    settle_seconds=0.01,
)

# -- 1. fast path -----------------------------------------------------------------------------


def search(query: str) -> str:
    """A tool that needs no approval."""
    return query


def ns_per_call(fn: Callable[[str], object], calls: int) -> float:
    """The same loop for the bare and the guarded function, so loop overhead cancels out."""
    query = "weather in Paris"
    start = time.perf_counter_ns()
    for _ in range(calls):
        fn(query)
    return (time.perf_counter_ns() - start) / calls


def median_ns_per_call(
    bare: Callable[[str], object], guarded: Callable[[str], object], sizes: Sizes
) -> tuple[float, float]:
    ns_per_call(bare, sizes.fast_path_calls // 10)
    ns_per_call(guarded, sizes.fast_path_calls // 10)
    bare_runs: list[float] = []
    guarded_runs: list[float] = []
    for _ in range(sizes.fast_path_reps):
        bare_runs.append(ns_per_call(bare, sizes.fast_path_calls))
        guarded_runs.append(ns_per_call(guarded, sizes.fast_path_calls))
    return statistics.median(bare_runs), statistics.median(guarded_runs)


def measure_fast_path(report: Report, workdir: Path, sizes: Sizes) -> None:
    variants = {
        "code": ("rules in code", RuleSet.from_dict({"tools": {"search": {"requires_approval": False}}})),
        "store": ("rules in the store", None),
    }
    for key, (described, rules) in variants.items():
        progress(f"fast path ({described})")
        store = SQLiteStore(workdir / f"fast-path-{key}.db")
        try:
            gate = Gate(store, rules=rules)
            guarded = gate.guard(search, requires_approval=False)
            with gate.scope(thread_id="bench-fast-path", agent="bench-agent"):
                if not guarded("probe").executed:
                    raise RuntimeError("the guarded call should have run without asking")
                bare_ns, guarded_ns = median_ns_per_call(search, guarded, sizes)
        finally:
            store.close()
        section = f"Fast path, {described}"
        report.add(Metric(section, f"fast_path_{key}_bare", "bare function", bare_ns, "ns"))
        report.add(Metric(section, f"fast_path_{key}_guarded", "guarded, no approval", guarded_ns, "ns"))
        report.add(
            Metric(
                section,
                f"fast_path_{key}_overhead",
                "overhead per call (median)",
                guarded_ns - bare_ns,
                "ns",
                Target("<=", FAST_PATH_OVERHEAD_TARGET_NS),
            )
        )


# -- 2. store cycles --------------------------------------------------------------------------


def report_cycles(report: Report, key: str, described: str, rates: dict[str, list[float]]) -> None:
    signoff = statistics.median(rates["signoff"])
    raw = statistics.median(rates["raw"])
    section = f"Store cycles/s, {described}"
    raw_label = "raw sqlite3" if key == "sqlite" else "raw psycopg"
    report.add(
        Metric(
            section,
            f"cycles_{key}_signoff",
            "signoff (median)",
            signoff,
            "cycles/s",
            details={"rounds": rates["signoff"]},
        )
    )
    report.add(
        Metric(
            section,
            f"cycles_{key}_raw",
            f"{raw_label} (median)",
            raw,
            "cycles/s",
            details={"rounds": rates["raw"]},
        )
    )
    report.add(
        Metric(
            section,
            f"cycles_{key}_ratio",
            "signoff / raw",
            100 * signoff / raw,
            "%",
            Target(">=", CYCLES_RATIO_TARGET_PERCENT),
        )
    )


def measure_sqlite_cycles(report: Report, workdir: Path, sizes: Sizes) -> None:
    progress("store cycles, SQLite")
    store = SQLiteStore(workdir / "cycles-signoff.db")
    raw = open_raw_sqlite(workdir / "cycles-raw.db")
    try:
        sides = {"signoff": signoff_cycle(store), "raw": raw_sqlite_cycle(raw)}
        rates = alternate(sides, sizes.sqlite_cycles, sizes.cycle_rounds)
    finally:
        store.close()
        raw.close()
    report_cycles(report, "sqlite", "SQLite (synchronous=FULL, WAL)", rates)


def measure_postgres_cycles(report: Report, dsn: str, schema: str, sizes: Sizes) -> None:
    progress("store cycles, PostgreSQL")
    with postgres_cycles(dsn, schema) as sides:
        rates = alternate(sides, sizes.postgres_cycles, sizes.cycle_rounds)
    report_cycles(report, "postgres", "PostgreSQL", rates)


# -- 3. wake-up latency -----------------------------------------------------------------------


def wakeup_samples(store: Store, decide: Decider, sizes: Sizes, thread_id: str) -> list[WakeSample]:
    gate = Gate(store, rules=ASK_RULES)
    scope = Scope(thread_id=thread_id, agent="bench-agent")
    total = sizes.wakeup_warmups + sizes.wakeups
    samples = [one_wakeup(gate, scope, index, decide, sizes.settle_seconds) for index in range(total)]
    return samples[sizes.wakeup_warmups :]


def report_wakeups(
    report: Report, key: str, described: str, samples: list[WakeSample], p99_ms: float
) -> None:
    section = f"Wake-up latency, {described}"
    wakeups = [sample.wakeup_ms for sample in samples]
    decides = [sample.decide_ms for sample in samples]
    totals = [sample.total_ms for sample in samples]
    details = {
        "samples": len(samples),
        "max_ms": max(wakeups),
        "decide_called_to_resumed_p50_ms": percentile(totals, 0.5),
        "decide_called_to_resumed_p99_ms": percentile(totals, 0.99),
    }
    report.add(
        Metric(section, f"wakeup_{key}_p50", "committed → resumed p50", percentile(wakeups, 0.5), "ms")
    )
    report.add(
        Metric(
            section,
            f"wakeup_{key}_p99",
            "committed → resumed p99",
            percentile(wakeups, 0.99),
            "ms",
            Target("<=", p99_ms),
            details,
        )
    )
    report.add(
        Metric(section, f"wakeup_{key}_decide_p50", "decide() itself p50", percentile(decides, 0.5), "ms")
    )
    report.add(
        Metric(section, f"wakeup_{key}_decide_p99", "decide() itself p99", percentile(decides, 0.99), "ms")
    )


def measure_wakeup_in_process(report: Report, spec: StoreSpec, sizes: Sizes) -> None:
    progress(f"wake-up latency, in-process ({spec.described})")
    store = spec.open()
    try:
        samples = wakeup_samples(store, lambda rid: decide_now(store, rid), sizes, "bench-wake-local")
    finally:
        store.close()
    key = "in_process" if spec.backend == "sqlite" else f"in_process_{spec.backend}"
    report_wakeups(
        report, key, f"in-process ({spec.described}, two threads)", samples, IN_PROCESS_P99_TARGET_MS
    )


def measure_wakeup_across_processes(report: Report, spec: StoreSpec, sizes: Sizes) -> None:
    progress(f"wake-up latency, two processes ({spec.described})")
    store = spec.open()
    try:
        with decider_in_other_process(spec) as decide:
            samples = wakeup_samples(store, decide, sizes, f"bench-wake-{spec.backend}")
    finally:
        store.close()
    report_wakeups(
        report,
        f"{spec.backend}_processes",
        f"two processes ({spec.described})",
        samples,
        WAKEUP_P99_TARGET_MS[spec.backend],
    )


# -- PostgreSQL -------------------------------------------------------------------------------


def measure_postgres(report: Report, dsn: str, sizes: Sizes) -> None:
    schema = f"signoff_bench_{uuid.uuid4().hex[:12]}"
    try:
        measure_postgres_cycles(report, dsn, schema, sizes)
        measure_wakeup_in_process(report, StoreSpec("postgres", dsn, schema), sizes)
        measure_wakeup_across_processes(report, StoreSpec("postgres", dsn, schema), sizes)
    finally:
        drop_schema(dsn, schema)


# -- main -------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer iterations: a smoke check (~20 s)")
    parser.add_argument("--no-postgres", action="store_true", help="skip the PostgreSQL measurements")
    parser.add_argument(
        "--dsn",
        default=os.environ.get("SIGNOFF_BENCH_POSTGRES_DSN")
        or os.environ.get("SIGNOFF_TEST_POSTGRES_DSN")
        or LOCAL_DSN,
        help="PostgreSQL to measure (a fresh schema is made and dropped)",
    )
    parser.add_argument("--output", type=Path, default=RESULTS_PATH, help="where to write the JSON results")
    return parser.parse_args(argv)


def run(sizes: Sizes, postgres_dsn: str | None, workdir: Path) -> Report:
    report = Report()
    measure_fast_path(report, workdir, sizes)
    measure_sqlite_cycles(report, workdir, sizes)
    measure_wakeup_in_process(report, StoreSpec("sqlite", str(workdir / "wakeup-in-process.db")), sizes)
    measure_wakeup_across_processes(report, StoreSpec("sqlite", str(workdir / "wakeup-processes.db")), sizes)
    if postgres_dsn is not None:
        measure_postgres(report, postgres_dsn, sizes)
    return report


def main(argv: list[str] | None = None) -> int:
    options = parse_args(argv)
    sizes = QUICK if options.quick else FULL
    skipped = (
        "PostgreSQL skipped: --no-postgres" if options.no_postgres else postgres_unavailable(options.dsn)
    )
    postgres_dsn = None if skipped else options.dsn
    machine = machine_info(postgres_dsn)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="signoff-bench-") as workdir:
        report = run(sizes, postgres_dsn, Path(workdir))
    if skipped:
        report.notes.append(skipped)
    report.notes.append(
        f"Wake-up latency is measured {LATENCY_BASIS}; 'decide() itself' is the decider's call "
        "including its commit (fsync). Percentiles over "
        f"{sizes.wakeups} requests per row, {sizes.wakeup_warmups} warm-ups dropped."
    )
    report.notes.append(
        f"Store cycles: create_request + decide(approve) against the raw driver's INSERT transaction + "
        f"UPDATE transaction on a table with the same columns and indexes as signoff's requests; "
        f"{sizes.cycle_rounds} alternating rounds per side, median cycles/s."
    )
    report.notes.append(f"Finished in {time.monotonic() - started:.0f} s; results in {options.output}.")
    mode = "quick" if options.quick else "full"
    print_report(report, f"signoff core benchmarks ({mode} run, {machine['cpu_count']} cores)")
    write_results(report, machine, options.quick, options.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
