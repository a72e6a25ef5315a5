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
import itertools
import json
import multiprocessing
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from importlib import metadata
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Literal

from raw_cycles import create_postgres_tables, open_raw_sqlite, raw_postgres_cycle, raw_sqlite_cycle
from signoff import Approve, Gate, Outcome, Pending, RuleSet, Scope, ToolCall
from signoff._util import utcnow
from signoff.requests import NewRequest
from signoff.store import SQLiteStore, Store

RESULTS_PATH = Path(__file__).resolve().parent / "results" / "core.json"
LOCAL_DSN = "postgresql://postgres@127.0.0.1:5432/test"
EMAIL_ARGS = {"to": "bob@example.com", "subject": "Quarterly report", "body": "Numbers attached."}
ASK_RULES = RuleSet.from_dict({"tools": {"send_email": {"requires_approval": True}}})
LATENCY_BASIS = "from decide() returning (committed) to review() returning in the waiter"
FAST_PATH_OVERHEAD_TARGET_NS = 2000
CYCLES_RATIO_TARGET_PERCENT = 50
IN_PROCESS_P99_TARGET_MS = 5.0
WAKEUP_P99_TARGET_MS = {"sqlite": 50.0, "postgres": 20.0}
"""Across two processes, by backend."""
TABLE_WIDTH = 120
"""Columns for the table when the output is not a terminal (a file, a pipe)."""
SUBSCRIBE_TIMEOUT = 10.0
RESUME_TIMEOUT = 30.0


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


# -- results ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    op: Literal["<=", ">="]
    value: float

    def met_by(self, value: float) -> bool:
        return value <= self.value if self.op == "<=" else value >= self.value


@dataclass(frozen=True)
class Metric:
    section: str
    name: str
    label: str
    value: float
    unit: str
    target: Target | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def met(self) -> bool | None:
        return None if self.target is None else self.target.met_by(self.value)

    def to_dict(self) -> dict[str, Any]:
        return {
            "section": self.section,
            "name": self.name,
            "label": self.label,
            "value": self.value,
            "unit": self.unit,
            "target": asdict(self.target) if self.target is not None else None,
            "met": self.met,
            **({"details": self.details} if self.details else {}),
        }


@dataclass
class Report:
    metrics: list[Metric] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, metric: Metric) -> None:
        self.metrics.append(metric)


def progress(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def percentile(values: list[float], fraction: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * fraction
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


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


def new_request(index: int) -> NewRequest:
    return NewRequest(
        thread_id="bench-cycles",
        tool_call_id=f"call-{index}",
        tool_name="send_email",
        args=EMAIL_ARGS,
        description="Send an email to bob@example.com",
        deadline=utcnow() + timedelta(hours=1),
    )


def signoff_cycle(store: Store) -> Callable[[int], None]:
    def cycle(index: int) -> None:
        request, _ = store.create_request(new_request(index))
        store.decide(request.id, Approve(), actor="alice", channel="bench")

    return cycle


def cycles_per_second(cycle: Callable[[int], None], numbers: Iterator[int], cycles: int) -> float:
    start = time.perf_counter()
    for _ in range(cycles):
        cycle(next(numbers))
    return cycles / (time.perf_counter() - start)


def alternate(sides: dict[str, Callable[[int], None]], cycles: int, rounds: int) -> dict[str, list[float]]:
    """Run the sides in turns (A B, B A, ...) after a warm-up; cycles/s of every round per side."""
    numbers = itertools.count()
    names = list(sides)
    for name in names:
        cycles_per_second(sides[name], numbers, max(cycles // 5, 10))
    rates: dict[str, list[float]] = {name: [] for name in names}
    for round_number in range(rounds):
        for name in names if round_number % 2 == 0 else reversed(names):
            rates[name].append(cycles_per_second(sides[name], numbers, cycles))
    return rates


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


@contextmanager
def postgres_cycles(dsn: str, schema: str) -> Iterator[dict[str, Callable[[int], None]]]:
    """signoff's cycle and the raw psycopg one, each on its own connection to `schema`."""
    import psycopg

    from signoff.store.postgres import PostgresStore

    store = PostgresStore(dsn, schema=schema, max_size=4)
    raw = psycopg.connect(dsn, options=f"-c search_path={schema}")
    try:
        create_postgres_tables(raw)
        yield {"signoff": signoff_cycle(store), "raw": raw_postgres_cycle(raw)}
    finally:
        store.close()
        raw.close()


def measure_postgres_cycles(report: Report, dsn: str, schema: str, sizes: Sizes) -> None:
    progress("store cycles, PostgreSQL")
    with postgres_cycles(dsn, schema) as sides:
        rates = alternate(sides, sizes.postgres_cycles, sizes.cycle_rounds)
    report_cycles(report, "postgres", "PostgreSQL", rates)


# -- 3. wake-up latency -----------------------------------------------------------------------


@dataclass(frozen=True)
class WakeSample:
    decide_called_ns: int
    decide_returned_ns: int
    resumed_ns: int

    @property
    def wakeup_ms(self) -> float:
        return (self.resumed_ns - self.decide_returned_ns) / 1e6

    @property
    def decide_ms(self) -> float:
        return (self.decide_returned_ns - self.decide_called_ns) / 1e6

    @property
    def total_ms(self) -> float:
        return (self.resumed_ns - self.decide_called_ns) / 1e6


Decider = Callable[[str], tuple[int, int]]
"""Decides a request (approve); returns monotonic ns just before the call and just after it returned."""


@dataclass(frozen=True)
class StoreSpec:
    """How another process opens the same store: a SQLite file, or a PostgreSQL DSN and schema."""

    backend: Literal["sqlite", "postgres"]
    location: str
    schema: str | None = None

    @property
    def described(self) -> str:
        return "SQLite" if self.backend == "sqlite" else "PostgreSQL"

    def open(self) -> Store:
        if self.backend == "sqlite":
            return SQLiteStore(self.location)
        from signoff.store.postgres import PostgresStore

        return PostgresStore(self.location, schema=self.schema, max_size=2, migrate=False)


def decide_now(store: Store, request_id: str) -> tuple[int, int]:
    called = time.monotonic_ns()
    store.decide(request_id, Approve(), actor="alice", channel="bench")
    return called, time.monotonic_ns()


def decider_process(spec: StoreSpec, pipe: Connection) -> None:
    """The other process: opens the same store, decides each request id it is sent."""
    store = spec.open()
    try:
        pipe.send("ready")
        while (request_id := pipe.recv()) is not None:
            pipe.send(decide_now(store, request_id))
    finally:
        store.close()
        pipe.close()


@contextmanager
def deciding_process(
    target: Callable[..., None], args: tuple[Any, ...], name: str
) -> Iterator[Callable[[Any], tuple[int, int]]]:
    """`target(*args, pipe)` in a process of its own, which sends "ready", then answers each message
    with the monotonic ns before and after its decision (None stops it); yields decide(message)."""
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    process = context.Process(target=target, args=(*args, theirs), name=name, daemon=True)
    process.start()
    theirs.close()
    if not ours.poll(60) or ours.recv() != "ready":
        process.kill()
        raise RuntimeError(f"the {name} process did not start")

    def decide(message: Any) -> tuple[int, int]:
        ours.send(message)
        if not ours.poll(RESUME_TIMEOUT):
            raise RuntimeError(f"the {name} process did not decide {message}")
        called, returned = ours.recv()
        return int(called), int(returned)

    try:
        yield decide
    finally:
        ours.send(None)
        process.join(10)
        if process.is_alive():
            process.kill()
        ours.close()


@contextmanager
def decider_in_other_process(spec: StoreSpec) -> Iterator[Decider]:
    with deciding_process(decider_process, (spec,), "bench-decider") as decide:
        yield decide


def wait_until_watched(store: Store, request_id: str) -> None:
    give_up = time.monotonic() + SUBSCRIBE_TIMEOUT
    while request_id not in store.hub.watched():
        if time.monotonic() > give_up:
            raise RuntimeError(f"the waiter never subscribed to {request_id}")
        time.sleep(0.0002)


def one_wakeup(gate: Gate, scope: Scope, index: int, decide: Decider, settle: float) -> WakeSample:
    """Submit a call, park a waiter in review(), decide once it is subscribed, time the resume."""
    call = ToolCall(name="send_email", args=EMAIL_ARGS, id=f"wake-{index}")
    pending = gate.submit(call, scope)
    if not isinstance(pending, Pending):
        raise RuntimeError(f"send_email should have needed approval, got {pending}")
    resumed: list[tuple[int, Outcome]] = []

    def wait() -> None:
        outcome = gate.review(call, scope, timeout=RESUME_TIMEOUT)
        resumed.append((time.monotonic_ns(), outcome))

    waiter = threading.Thread(target=wait, name="bench-waiter", daemon=True)
    waiter.start()
    wait_until_watched(gate.store, pending.request_id)
    time.sleep(settle)
    called, returned = decide(pending.request_id)
    waiter.join(RESUME_TIMEOUT)
    if not resumed:
        raise RuntimeError(f"the waiter did not resume after request {pending.request_id} was decided")
    resumed_ns, outcome = resumed[0]
    if not outcome.execute:
        raise RuntimeError(f"request {pending.request_id} should have been approved, got {outcome.status}")
    return WakeSample(called, returned, resumed_ns)


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


def postgres_server_version(dsn: str) -> str:
    """The server's version, or raise if it cannot be reached."""
    import psycopg

    with psycopg.connect(dsn, connect_timeout=3) as connection:
        row = connection.execute("SHOW server_version").fetchone()
        return str(row[0]) if row else "unknown"


def drop_schema(dsn: str, schema: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def measure_postgres(report: Report, dsn: str, sizes: Sizes) -> None:
    schema = f"signoff_bench_{uuid.uuid4().hex[:12]}"
    try:
        measure_postgres_cycles(report, dsn, schema, sizes)
        measure_wakeup_in_process(report, StoreSpec("postgres", dsn, schema), sizes)
        measure_wakeup_across_processes(report, StoreSpec("postgres", dsn, schema), sizes)
    finally:
        drop_schema(dsn, schema)


def postgres_unavailable(dsn: str) -> str | None:
    """Why PostgreSQL rows must be skipped, or None if the server answers."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "PostgreSQL skipped: psycopg is not installed (pip install 'signoff[postgres]')"
    try:
        postgres_server_version(dsn)
    except Exception as exc:
        reason = " ".join(str(exc).split())
        return f"PostgreSQL skipped: cannot reach {dsn} ({type(exc).__name__}: {reason})"
    return None


# -- machine info -----------------------------------------------------------------------------


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def memory_total_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024**2, 1)
    except OSError:
        pass
    return None


def git_commit() -> str | None:
    try:
        found = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return found.stdout.strip()


def package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def machine_info(postgres_dsn: str | None) -> dict[str, Any]:
    info: dict[str, Any] = {
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "memory_gib": memory_total_gib(),
        "load_average_at_start": list(os.getloadavg()),
        "python": sys.version.split()[0],
        "python_implementation": platform.python_implementation(),
        "sqlite": sqlite3.sqlite_version,
        "signoff": package_version("signoff"),
        "psycopg": package_version("psycopg"),
        "git_commit": git_commit(),
    }
    if postgres_dsn is not None:
        info["postgres_server"] = postgres_server_version(postgres_dsn)
    return info


# -- output -----------------------------------------------------------------------------------


def format_value(metric: Metric) -> str:
    if metric.unit == "ns":
        return f"{metric.value:,.0f} ns"
    if metric.unit == "cycles/s":
        return f"{metric.value:,.0f} cycles/s"
    if metric.unit == "%":
        return f"{metric.value:.1f} %"
    return f"{metric.value:.3f} {metric.unit}"


def format_target(metric: Metric) -> str:
    if metric.target is None:
        return ""
    sign = "≤" if metric.target.op == "<=" else "≥"
    if metric.unit == "ns":
        return f"{sign} {metric.target.value / 1000:g} µs"
    return f"{sign} {metric.target.value:g} {metric.unit}"


def format_met(metric: Metric) -> str:
    return {None: "", True: "met", False: "MISSED"}[metric.met]


def table_rows(report: Report) -> Iterator[tuple[str, str, str, str, str]]:
    for metric in report.metrics:
        yield metric.section, metric.label, format_value(metric), format_target(metric), format_met(metric)


def print_rich(report: Report, title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_lines=False)
    for column, justify in (
        ("Section", "left"),
        ("Measurement", "left"),
        ("Value", "right"),
        ("Target", "right"),
        ("Met", "center"),
    ):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    previous = None
    for section, label, value, target, met in table_rows(report):
        if previous is not None and section != previous:
            table.add_section()
        style = "bold red" if met == "MISSED" else ("green" if met == "met" else None)
        met_cell = f"[{style}]{met}[/]" if style else met
        table.add_row(section if section != previous else "", label, value, target, met_cell)
        previous = section
    console = Console()
    if not console.is_terminal:
        console = Console(width=TABLE_WIDTH)
    console.print(table)
    for note in report.notes:
        console.print(f"• {note}", highlight=False)


def print_plain(report: Report, title: str) -> None:
    rows = [("Section", "Measurement", "Value", "Target", "Met"), *table_rows(report)]
    widths = [max(len(row[column]) for row in rows) for column in range(5)]
    print(title)
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    for note in report.notes:
        print(f"* {note}")


def print_report(report: Report, title: str) -> None:
    try:
        print_rich(report, title)
    except ImportError:
        print_plain(report, title)


def write_results(report: Report, machine: dict[str, Any], quick: bool, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": sys.version,
        "quick": quick,
        "machine": machine,
        "latency_basis": LATENCY_BASIS,
        "metrics": [metric.to_dict() for metric in report.metrics],
        "notes": report.notes,
    }
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


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
