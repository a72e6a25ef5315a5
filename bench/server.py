"""Server benchmarks: decision → remote waiter latency, decision throughput, inbox first page.

    .venv/bin/python bench/server.py [--quick]

Prints one table (measurement, value, target, met) and writes bench/results/server.json.
The server runs as `signoff serve` in its own process (one uvicorn worker) on a SQLite file;
the clients run in this process. Both share this machine's cores, so the throughput is what
one small box does with its clients on it.

1. Decision → waiting remote agent resumed: an agent waits on a request through the API
   (the `/wait` long-poll, and `Gate(Client)` when the remote client is installed, which waits
   on the shared SSE stream); a person POSTs the decision. Latency is from the decision's
   HTTP response (committed) to the waiter holding the decided request, on CLOCK_MONOTONIC.
2. `POST /v1/requests/{id}/decision` throughput: 32 concurrent clients approve distinct pending
   requests; decisions per second of wall time, over the whole batch. Beside it, without a
   target, `POST /v1/requests` from 32 concurrent agents asking for new decisions. The load
   generator is `keepalive.py`: 32 keep-alive HTTP/1.1 connections written and read as raw
   bytes over asyncio streams, in this one process (no HTTP library: httpx cost about 1 ms of
   CPU a call, twice the server's). Wall-clock rates follow the machine's load (the clients
   share its cores with the server); so each batch also reads CPU time before and after: the
   server process's (user + system, /proc/PID/stat, and by thread from /proc/PID/task, its
   threads named by `named_threads.py`), as ms per decision and the decisions per second one
   core would sustain at that cost (1000 / ms), independent of load; and the generator's own
   (this process), to show how much of the machine the clients themselves take.
3. Inbox first page with 10,000 pending requests: `GET /` (the web inbox, signed in)
   measured as the server's own handling time (the `Server-Timing` header when present,
   else the client round trip on loopback).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import httpx

from core import Metric, Report, Target, machine_info, percentile, print_report, progress, write_results
from server_running import Running, auth, serving
from server_throughput import measure_throughput, prepare_pending
from signoff.store import SQLiteStore

RESULTS_PATH = Path(__file__).resolve().parent / "results" / "server.json"
WAKE_P99_TARGET_MS = 50.0
INBOX_TARGET_MS = 100.0


@dataclass(frozen=True)
class Sizes:
    wakeups: int
    warmups: int
    decisions: int
    inbox_pending: int
    inbox_samples: int


FULL = Sizes(wakeups=300, warmups=20, decisions=4000, inbox_pending=10_000, inbox_samples=30)
QUICK = Sizes(wakeups=40, warmups=5, decisions=600, inbox_pending=10_000, inbox_samples=5)


def new_request(agent: httpx.Client, thread: str, call: str) -> str:
    response = agent.post(
        "/v1/requests",
        json={
            "thread_id": thread,
            "tool_call_id": call,
            "tool": "send_email",
            "args": {"to": "bob@example.com", "subject": "Quarterly report"},
            "approvers": ["alice"],
        },
    )
    response.raise_for_status()
    request_id: str = response.json()["id"]
    return request_id


# -- 1. decision → remote waiter ---------------------------------------------------------------


def measure_long_poll(running: Running, sizes: Sizes) -> list[float]:
    latencies: list[float] = []
    with (
        httpx.Client(base_url=running.url, headers=auth(running.agent_token), timeout=30) as agent,
        httpx.Client(base_url=running.url, headers=auth(running.agent_token), timeout=30) as waiter_http,
        httpx.Client(base_url=running.url, headers=auth(running.person_token), timeout=30) as person,
    ):
        for index in range(sizes.wakeups + sizes.warmups):
            request_id = new_request(agent, "wake-poll", f"c{index}")
            resumed: list[int] = []

            def wait(request_id: str = request_id, resumed: list[int] = resumed) -> None:
                body = waiter_http.get(f"/v1/requests/{request_id}/wait", params={"timeout": 30}).json()
                resumed.append(time.monotonic_ns())
                assert body["status"] == "approved", body

            thread = threading.Thread(target=wait)
            thread.start()
            time.sleep(0.01)  # the long-poll is parked on the server
            person.post(f"/v1/requests/{request_id}/decision", json={"type": "approve"}).raise_for_status()
            decided = time.monotonic_ns()
            thread.join()
            if index >= sizes.warmups:
                latencies.append((resumed[0] - decided) / 1e6)
    return latencies


def measure_gate_client(running: Running, sizes: Sizes) -> list[float] | None:
    try:
        from signoff import Client, Gate, RuleSet, Scope, ToolCall
    except ImportError:
        return None
    rules = RuleSet.from_yaml("tools: {send_email: {requires_approval: true, approvers: [alice]}}")
    latencies: list[float] = []
    client = Client(running.url, running.agent_token)
    try:
        gate = Gate(client, rules=rules, scope=Scope(thread_id="wake-gate", agent="bench"))
        with httpx.Client(base_url=running.url, headers=auth(running.person_token), timeout=30) as person:
            for index in range(sizes.wakeups + sizes.warmups):
                call = ToolCall(name="send_email", args={"to": "bob@example.com"}, id=f"g{index}")
                resumed: list[int] = []

                def review(call: ToolCall = call, resumed: list[int] = resumed) -> None:
                    outcome = gate.review(call)
                    resumed.append(time.monotonic_ns())
                    assert outcome.execute

                thread = threading.Thread(target=review)
                thread.start()
                request_id = wait_for_pending(person, "wake-gate", call.id or "")
                time.sleep(0.01)
                person.post(
                    f"/v1/requests/{request_id}/decision", json={"type": "approve"}
                ).raise_for_status()
                decided = time.monotonic_ns()
                thread.join()
                if index >= sizes.warmups:
                    latencies.append((resumed[0] - decided) / 1e6)
    finally:
        client.close()
    return latencies


def wait_for_pending(person: httpx.Client, thread: str, call_id: str) -> str:
    while True:
        items = person.get("/v1/requests", params={"thread_id": thread, "tool_call_id": call_id}).json()[
            "items"
        ]
        if items:
            request_id: str = items[0]["id"]
            return request_id
        time.sleep(0.002)


def add_latency(report: Report, name: str, label: str, latencies: list[float]) -> None:
    report.add(
        Metric(
            "decision → remote waiter",
            f"{name}_p99",
            f"{label}: p99",
            percentile(latencies, 0.99),
            "ms",
            Target("<=", WAKE_P99_TARGET_MS),
            {
                "p50_ms": statistics.median(latencies),
                "p90_ms": percentile(latencies, 0.90),
                "max_ms": max(latencies),
                "samples": len(latencies),
            },
        )
    )
    report.add(
        Metric("decision → remote waiter", f"{name}_p50", f"{label}: p50", statistics.median(latencies), "ms")
    )


# -- 3. inbox first page -----------------------------------------------------------------------


def measure_inbox(report: Report, workdir: Path, sizes: Sizes) -> None:
    with serving(workdir, "inbox") as running:
        prepare_pending(running.db, sizes.inbox_pending, "alice", "inbox")
        store = SQLiteStore(running.db)
        try:
            login, _ = store.issue_credential("login", "alice", ttl=timedelta(minutes=5), actor="bench")
        finally:
            store.close()
        with httpx.Client(base_url=running.url, timeout=30, follow_redirects=True) as browser:
            # A login link's GET shows "Sign in as …"; only its button (a same-site POST) signs in.
            signed_in = browser.post(
                "/login", data={"token": login}, headers={"Sec-Fetch-Site": "same-origin"}
            )
            if signed_in.status_code != 200 or "/login" in str(signed_in.url):
                report.notes.append("Inbox page skipped: the inbox did not sign in (is it installed?).")
                return
            server_ms: list[float] = []
            round_trip_ms: list[float] = []
            for _ in range(sizes.inbox_samples + 3):
                started = time.perf_counter()
                page = browser.get("/")
                round_trip_ms.append((time.perf_counter() - started) * 1000)
                page.raise_for_status()
                server_ms.append(server_timing(page) or round_trip_ms[-1])
            cards = page.text.count('<article class="card ')
    server_ms, round_trip_ms = server_ms[3:], round_trip_ms[3:]
    report.add(
        Metric(
            "inbox",
            "first_page_ms",
            f"inbox first page, {sizes.inbox_pending:,} pending: server time (median)",
            statistics.median(server_ms),
            "ms",
            Target("<=", INBOX_TARGET_MS),
            {
                "p90_ms": percentile(server_ms, 0.9),
                "round_trip_median_ms": statistics.median(round_trip_ms),
                "cards": cards,
            },
        )
    )


def server_timing(response: httpx.Response) -> float | None:
    header = response.headers.get("server-timing", "")
    for part in header.split(","):
        for item in part.split(";"):
            if item.strip().startswith("dur="):
                return float(item.strip()[4:])
    return None


# -- main --------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer iterations: a smoke check")
    parser.add_argument("--output", type=Path, default=RESULTS_PATH)
    options = parser.parse_args(argv)
    sizes = QUICK if options.quick else FULL
    report = Report()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="signoff-bench-server-") as tmp:
        workdir = Path(tmp)
        progress("decision → remote waiter (long-poll)")
        with serving(workdir, "wakeups") as running:
            add_latency(report, "long_poll", "long-poll /wait", measure_long_poll(running, sizes))
            progress("decision → remote waiter (Gate over Client)")
            gate_latencies = measure_gate_client(running, sizes)
            if gate_latencies is None:
                report.notes.append("Gate(Client) skipped: signoff.Client is not available.")
            else:
                add_latency(report, "gate_client", "Gate(Client).review, SSE", gate_latencies)
        progress("decision throughput")
        measure_throughput(report, workdir, sizes.decisions)
        progress("inbox first page")
        measure_inbox(report, workdir, sizes)
    report.notes.append(
        "Latency: from the decision's HTTP response to the waiting agent holding the decided request, "
        f"{sizes.wakeups} requests per row after {sizes.warmups} warm-ups."
    )
    report.notes.append(f"Finished in {time.monotonic() - started:.0f} s; results in {options.output}.")
    machine = machine_info(None)
    machine["cpu_count"] = os.cpu_count()
    print_report(report, f"signoff server benchmarks ({'quick' if options.quick else 'full'} run)")
    write_results(report, machine, options.quick, options.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
