"""AG-UI benchmark: a run with 100 pending requests, time to its first event and to RUN_FINISHED.

    .venv/bin/python bench/agui.py [--quick]

Prints one table (measurement, value, target, met) and writes bench/results/agui.json.
The server runs as `signoff serve` in its own process (one uvicorn worker) on a SQLite file
holding 100 pending requests that alice may decide; this process POSTs `/agui` as alice (a
fresh run with no history each time, as a refreshed page does) over one keep-alive
connection, and reads the SSE stream. Times are from sending the request to reading, on
CLOCK_MONOTONIC: the first event (RUN_STARTED), the first TOOL_CALL_START, and RUN_FINISHED
(100 tool calls and an interrupt outcome listing 100 interrupts, checked on every run).
Issue 10's target: the first event within 100 ms, taken here as the p99 of the runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import httpx

from machine import machine_info
from metrics import Metric, Report, Target, percentile
from output import print_report, progress, write_results
from serving import signoff_serve
from signoff._util import utcnow
from signoff.requests import NewRequest
from signoff.rules.model import RequestRule
from signoff.store import SQLiteStore

RESULTS_PATH = Path(__file__).resolve().parent / "results" / "agui.json"
FIRST_EVENT_TARGET_MS = 100.0
PENDING = 100


@dataclass(frozen=True)
class Sizes:
    runs: int
    warmups: int


FULL = Sizes(runs=200, warmups=10)
QUICK = Sizes(runs=20, warmups=3)


@contextmanager
def serving(workdir: Path) -> Iterator[tuple[str, str]]:
    """`signoff serve` on a database with PENDING requests for alice; yields (url, alice's token)."""
    db = workdir / "agui.db"
    store = SQLiteStore(db)
    store.add_user("bot", role="agent", actor="bench")
    store.add_user("alice", role="member", actor="bench")
    token, _ = store.issue_credential("token", "alice", actor="bench")
    for index in range(PENDING):
        store.create_request(
            NewRequest(
                thread_id=f"thread-{index % 10}",
                tool_call_id=f"call-{index}",
                tool_name="send_email",
                args={"to": "bob@example.com", "subject": f"Quarterly report {index}", "body": "x" * 200},
                description="Send an email to bob@example.com",
                deadline=utcnow() + timedelta(hours=1),
                rule=RequestRule(approvers=("alice",)),
                agent="mailer",
                actor="bot",
                channel="bench",
            )
        )
    store.close()
    with signoff_serve(db, startup=30) as (url, _):
        yield url, token


@dataclass(frozen=True)
class Timing:
    first_event_ms: float
    first_call_ms: float
    finished_ms: float


def one_run(client: httpx.Client) -> Timing:
    body = {"threadId": f"page-{uuid.uuid4().hex[:8]}", "runId": uuid.uuid4().hex, "messages": []}
    first_event = first_call = None
    calls = 0
    started = time.monotonic_ns()
    with client.stream("POST", "/agui", json=body, headers={"Accept": "text/event-stream"}) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if not line.startswith("data:"):
                continue
            now = time.monotonic_ns()
            first_event = first_event or now
            event = json.loads(line[5:])
            if event["type"] == "TOOL_CALL_START":
                first_call = first_call or now
                calls += 1
            elif event["type"] == "RUN_FINISHED":
                interrupts = event["outcome"]["interrupts"]
                assert calls == PENDING and len(interrupts) == PENDING, (calls, len(interrupts))
                assert first_event is not None and first_call is not None
                return Timing(*((moment - started) / 1e6 for moment in (first_event, first_call, now)))
    raise AssertionError("the run ended without RUN_FINISHED")


def measure(url: str, token: str, sizes: Sizes) -> list[Timing]:
    timings = []
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
        for index in range(sizes.warmups + sizes.runs):
            timing = one_run(client)
            if index >= sizes.warmups:
                timings.append(timing)
    return timings


def add(report: Report, name: str, label: str, values: list[float], target: Target | None = None) -> None:
    details = {
        "p50_ms": statistics.median(values),
        "p90_ms": percentile(values, 0.90),
        "max_ms": max(values),
        "samples": len(values),
    }
    report.add(
        Metric(
            "AG-UI run, 100 pending",
            f"{name}_p99",
            f"{label}: p99",
            percentile(values, 0.99),
            "ms",
            target,
            details,
        )
    )
    report.add(
        Metric("AG-UI run, 100 pending", f"{name}_p50", f"{label}: p50", statistics.median(values), "ms")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer runs: a smoke check")
    parser.add_argument("--output", type=Path, default=RESULTS_PATH)
    options = parser.parse_args(argv)
    sizes = QUICK if options.quick else FULL
    report = Report()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="signoff-bench-agui-") as tmp:
        progress(f"AG-UI runs with {PENDING} pending requests")
        with serving(Path(tmp)) as (url, token):
            timings = measure(url, token, sizes)
    add(
        report,
        "first_event",
        "first event (RUN_STARTED)",
        [t.first_event_ms for t in timings],
        Target("<=", FIRST_EVENT_TARGET_MS),
    )
    add(report, "first_call", "first TOOL_CALL_START", [t.first_call_ms for t in timings])
    add(report, "finished", "RUN_FINISHED (100 calls, 100 interrupts)", [t.finished_ms for t in timings])
    report.notes.append(
        f"{sizes.runs} runs after {sizes.warmups} warm-ups, one after another, each a new thread without "
        "history (so every request is sent: START, ARGS, END), over one keep-alive connection."
    )
    report.notes.append(f"Finished in {time.monotonic() - started:.0f} s; results in {options.output}.")
    machine = machine_info(None)
    machine["cpu_count"] = os.cpu_count()
    print_report(report, f"signoff AG-UI benchmark ({'quick' if options.quick else 'full'} run)")
    write_results(report, machine, options.quick, options.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
