"""PostgreSQL `decide` in one statement (`decide_at_once`) against the path it replaced: read the
request, check it here, then write (two round trips).

    .venv/bin/python bench/pg_decide.py [--quick] [--dsn DSN]

Both sides decide (approve, with a comment) requests made beforehand, through `Store.decide`, on
one pooled connection of one store: "two round trips" is the same store with the statement turned
off, so it runs the checked path `decide` falls back to. The sides take turns decision by decision
(A B, B A, ...), so that the machine's noise falls on both alike; each side's figure is the median
over its decisions in a round, the ratio is taken round by round, and both are reported as the
median (min–max) of the rounds. Wall time on the monotonic clock; client
CPU on the thread's CPU clock (what the calling process spends, free of the machine's noise). Run
with the server's `synchronous_commit` (each commit waits for its WAL flush, which the two paths
share) and with it off for the session (what the round trips themselves cost). Prints a table and
writes bench/results/pg-decide.json.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

from machine import machine_info
from metrics import Metric, Report, Target
from output import print_report, progress, write_results
from postgres_server import drop_schema
from signoff import Approve
from signoff._util import utcnow
from signoff.requests import NewRequest
from signoff.rules.model import RequestRule
from signoff.store.postgres import PostgresStore

RESULTS = Path(__file__).resolve().parent / "results" / "pg-decide.json"
ONE = "one statement"
TWO = "two round trips"
ARGS = {"to": "bob@example.com", "subject": "Quarterly report", "body": "Numbers attached.", "password": "x"}
RULE = RequestRule(approvers=("alice", "group:ops"), redact=("password",))


def default_dsn() -> str:
    return (
        os.environ.get("SIGNOFF_BENCH_POSTGRES_DSN")
        or os.environ.get("SIGNOFF_TEST_POSTGRES_DSN")
        or "postgresql://postgres@127.0.0.1:5432/test"
    )


def open_store(dsn: str, schema: str, synchronous_commit: str | None) -> PostgresStore:
    """A store on one connection, with `synchronous_commit` set for its session when given."""
    store = PostgresStore(dsn, schema=schema, min_size=1, max_size=1)
    if synchronous_commit is not None:
        with store._pool.connection() as connection:
            connection.execute(f"SET synchronous_commit = {synchronous_commit}")
    return store


def make_requests(store: PostgresStore, count: int, tag: str) -> list[str]:
    deadline = utcnow() + timedelta(hours=1)
    ids = []
    for index in range(count):
        request, _ = store.create_request(
            NewRequest(
                thread_id=f"{tag}-{index}",
                tool_call_id="call",
                tool_name="send_email",
                args=ARGS,
                description="send a mail",
                deadline=deadline,
                rule=RULE,
            )
        )
        ids.append(request.id)
    return ids


def decide_timed(store: PostgresStore, request_id: str, two_round_trips: bool) -> tuple[int, int]:
    """Wall and thread-CPU nanoseconds of one decision."""
    if two_round_trips:
        store._decide_at_once = lambda *args, **kwargs: None  # type: ignore[method-assign]
    try:
        wall, cpu = time.perf_counter_ns(), time.thread_time_ns()
        store.decide(request_id, Approve(comment="fine"), actor="alice")
        return time.perf_counter_ns() - wall, time.thread_time_ns() - cpu
    finally:
        if two_round_trips:
            del store._decide_at_once  # back to the class's


def measure(
    report: Report, dsn: str, schema: str, synchronous_commit: str | None, rounds: int, per_round: int
) -> None:
    label = f"synchronous_commit {synchronous_commit or 'as served'}"
    store = open_store(dsn, schema, synchronous_commit)
    medians: dict[str, dict[str, list[float]]] = {side: {"wall": [], "cpu": []} for side in (ONE, TWO)}
    try:
        for request_id in make_requests(store, 20, f"warm-{label}"):  # connection and caches warm
            decide_timed(store, request_id, len(request_id) % 2 == 0)
        for index in range(rounds):
            progress(f"{label}: round {index + 1}/{rounds}")
            ids = make_requests(store, 2 * per_round, f"{label}-{index}")
            samples: dict[str, dict[str, list[int]]] = {side: {"wall": [], "cpu": []} for side in (ONE, TWO)}
            for pair in range(per_round):
                order = (ONE, TWO) if pair % 2 == 0 else (TWO, ONE)
                for offset, side in enumerate(order):
                    wall, cpu = decide_timed(store, ids[2 * pair + offset], side == TWO)
                    samples[side]["wall"].append(wall)
                    samples[side]["cpu"].append(cpu)
            for side in (ONE, TWO):
                for clock in ("wall", "cpu"):
                    medians[side][clock].append(statistics.median(samples[side][clock]) / 1e6)
            store.seal_audit()
        assert store.verify_audit(requests=False).ok, "the audit chain does not verify"
    finally:
        store.close()
    section = f"PostgreSQL decide, {label}"
    for side in (ONE, TWO):
        for clock, name in (("wall", "wall"), ("cpu", "client CPU")):
            values = medians[side][clock]
            report.add(
                Metric(
                    section,
                    f"{side.replace(' ', '_')}_{clock}_ms",
                    f"{side}: {name} per decision (median of round medians)",
                    statistics.median(values),
                    "ms",
                    details={"min": min(values), "max": max(values), "rounds": values},
                )
            )
    for clock, name in (("wall", "wall"), ("cpu", "client CPU")):
        ratios = [one / two for one, two in zip(medians[ONE][clock], medians[TWO][clock], strict=True)]
        report.add(
            Metric(
                section,
                f"one_over_two_{clock}",
                f"one statement / two round trips: {name} (round by round, median)",
                statistics.median(ratios),
                "x",
                Target("<=", 1.0),
                {"min": min(ratios), "max": max(ratios), "rounds": ratios},
            )
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter rounds")
    parser.add_argument("--dsn", default=default_dsn())
    parser.add_argument("--output", type=Path, default=RESULTS)
    options = parser.parse_args(argv)
    rounds, per_round = (4, 100) if options.quick else (10, 300)
    schema = f"signoff_bench_{uuid.uuid4().hex[:8]}"
    report = Report()
    try:
        for synchronous_commit in (None, "off"):
            measure(report, options.dsn, schema, synchronous_commit, rounds, per_round)
    finally:
        drop_schema(options.dsn, schema)
    report.notes.append(
        f"{rounds} rounds of {per_round} decisions per side, in turns, through Store.decide on one pooled "
        "connection; 'two round trips' is the checked path (get_request, then the fused finish statement)."
    )
    write_results(report, machine_info(options.dsn), options.quick, options.output)
    print_report(report, "PostgreSQL decide: one statement against a read and a write")
    return 0


if __name__ == "__main__":
    sys.exit(main())
