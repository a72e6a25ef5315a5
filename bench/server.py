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
2. `POST /v1/requests/{id}/decision` throughput: 32 concurrent clients (asyncio, one keep-alive
   HTTP/1.1 connection each) approve distinct pending requests; decisions per second of
   wall time, over the whole batch. Beside it, without a target, `POST /v1/requests` from 32
   concurrent agents asking for new decisions. Wall-clock rates follow the machine's load (the
   clients share its cores with the server); so each batch also reads the server process's own
   CPU time (user + system, /proc/PID/stat) before and after: CPU ms per decision, and the
   decisions per second one core would sustain at that cost (1000 / ms), independent of load.
3. Inbox first page with 10,000 pending requests: `GET /` (the web inbox, signed in)
   measured as the server's own handling time (the `Server-Timing` header when present,
   else the client round trip on loopback).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import httpx

from core import Metric, Report, Target, machine_info, percentile, print_report, progress, write_results
from serving import signoff_serve
from signoff._util import utcnow
from signoff.requests import NewRequest
from signoff.rules.model import RequestRule
from signoff.store import SQLiteStore

RESULTS_PATH = Path(__file__).resolve().parent / "results" / "server.json"
WAKE_P99_TARGET_MS = 50.0
THROUGHPUT_TARGET = 500.0
PER_CORE_TARGET = 1000.0
"""Issue 19: decisions through the API >= 1,000/s on SQLite, one process: on one core's CPU."""
INBOX_TARGET_MS = 100.0
CLIENTS = 32


@dataclass(frozen=True)
class Sizes:
    wakeups: int
    warmups: int
    decisions: int
    inbox_pending: int
    inbox_samples: int


FULL = Sizes(wakeups=300, warmups=20, decisions=4000, inbox_pending=10_000, inbox_samples=30)
QUICK = Sizes(wakeups=40, warmups=5, decisions=600, inbox_pending=10_000, inbox_samples=5)


@dataclass
class Running:
    url: str
    db: Path
    agent_token: str
    person_token: str
    admin: str
    pid: int


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` (all its threads) so far, from /proc."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()  # after the command name, which may hold spaces
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def serving(
    workdir: Path, name: str, *, env: dict[str, str] | None = None, cwd: Path | None = None
) -> Iterator[Running]:
    db = workdir / f"{name}.db"
    store = SQLiteStore(db)
    store.add_user("admin", role="admin", actor="bench")
    store.add_user("bot", role="agent", actor="bench")
    store.add_user("alice", role="member", actor="bench")
    agent_token, _ = store.issue_credential("token", "bot", actor="bench")
    person_token, _ = store.issue_credential("token", "alice", actor="bench")
    store.close()
    with signoff_serve(db, startup=30, env=env, cwd=cwd) as (url, process):
        yield Running(url, db, agent_token, person_token, "admin", process.pid)


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


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


# -- 2. decision throughput --------------------------------------------------------------------


def prepare_pending(db: Path, count: int, approver: str, thread: str) -> list[str]:
    store = SQLiteStore(db)
    ids = []
    try:
        for index in range(count):
            request, _ = store.create_request(
                NewRequest(
                    thread_id=thread,
                    tool_call_id=f"t{index}",
                    tool_name="send_email",
                    args={"to": "bob@example.com"},
                    description="Send an email",
                    deadline=utcnow() + timedelta(hours=1),
                    rule=RequestRule(approvers=(approver,)),
                    actor="bot",
                )
            )
            ids.append(request.id)
    finally:
        store.close()
    return ids


class KeepAliveConnection:
    """A minimal HTTP/1.1 keep-alive client for the load generator: httpx's own per-request cost
    (about 1 ms of CPU here) would otherwise be what the throughput measures, since the clients
    share this machine's two cores with the server."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str) -> None:
        self.reader = reader
        self.writer = writer
        self.host = host

    @classmethod
    async def open(cls, url: str) -> KeepAliveConnection:
        host, port = url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        return cls(reader, writer, f"{host}:{port}")

    async def post_json(self, path: str, body: bytes, token: str) -> tuple[int, bytes]:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        self.writer.write(head.encode() + body)
        status_line = await self.reader.readline()
        status = int(status_line.split()[1])
        length = 0
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return status, await self.reader.readexactly(length)

    def close(self) -> None:
        self.writer.close()


async def post_all(url: str, token: str, calls: list[tuple[str, bytes]], expect: int) -> tuple[float, int]:
    """POST each (path, body) over CLIENTS keep-alive connections; (seconds, failures)."""
    pending = list(reversed(calls))
    failures = 0
    connections = [await KeepAliveConnection.open(url) for _ in range(CLIENTS)]

    async def worker(connection: KeepAliveConnection) -> None:
        nonlocal failures
        while pending:
            path, body = pending.pop()
            status, answer = await connection.post_json(path, body, token)
            if status != expect:
                failures += 1
                if failures == 1:
                    progress(f"a call failed: {status} {answer[:300]!r}")

    started = time.perf_counter()
    await asyncio.gather(*(worker(connection) for connection in connections))
    elapsed = time.perf_counter() - started
    for connection in connections:
        connection.close()
    return elapsed, failures


async def decide_all(url: str, token: str, ids: list[str]) -> tuple[float, int]:
    body = b'{"type": "approve"}'
    return await post_all(
        url, token, [(f"/v1/requests/{request_id}/decision", body) for request_id in ids], 200
    )


async def ask_all(url: str, token: str, thread: str, count: int) -> tuple[float, int]:
    calls = [
        (
            "/v1/requests",
            json.dumps(
                {
                    "thread_id": thread,
                    "tool_call_id": f"c{index}",
                    "tool": "send_email",
                    "args": {"to": "bob@example.com", "subject": "Quarterly report"},
                    "approvers": ["alice"],
                }
            ).encode(),
        )
        for index in range(count)
    ]
    return await post_all(url, token, calls, 201)


@dataclass(frozen=True)
class Batch:
    """One batch of calls: its wall time and the server process's CPU time over it."""

    calls: int
    seconds: float
    server_cpu_seconds: float

    @property
    def per_second(self) -> float:
        return self.calls / self.seconds

    @property
    def cpu_ms(self) -> float:
        """Server CPU milliseconds per call."""
        return self.server_cpu_seconds * 1000 / self.calls

    @property
    def per_core_second(self) -> float:
        """Calls one core of the server would answer per second at this CPU cost."""
        return 1000 / self.cpu_ms if self.cpu_ms else float("inf")


def timed_batch(running: Running, calls: int, post: Callable[[], tuple[float, int]], what: str) -> Batch:
    before = process_cpu_seconds(running.pid)
    seconds, failures = post()
    cpu = process_cpu_seconds(running.pid) - before
    if failures:
        raise RuntimeError(f"{failures} of {calls} {what} failed")
    return Batch(calls, seconds, cpu)


def throughput_batches(
    workdir: Path,
    name: str,
    decisions: int,
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> tuple[Batch, Batch]:
    """(decisions, asks): `decisions` POST …/decision and as many POST /v1/requests, each after
    200 warm-up calls, on a fresh `signoff serve` (run with `env` and `cwd`, e.g. another checkout's)."""
    with serving(workdir, name, env=env, cwd=cwd) as running:
        warm = prepare_pending(running.db, 200, "alice", "warm-up")
        asyncio.run(decide_all(running.url, running.person_token, warm))
        ids = prepare_pending(running.db, decisions, "alice", "throughput")
        decided = timed_batch(
            running,
            decisions,
            lambda: asyncio.run(decide_all(running.url, running.person_token, ids)),
            "decisions",
        )
        asyncio.run(ask_all(running.url, running.agent_token, "warm-up-asks", 200))
        asked = timed_batch(
            running,
            decisions,
            lambda: asyncio.run(ask_all(running.url, running.agent_token, "asks", decisions)),
            "asks",
        )
    return decided, asked


def measure_throughput(report: Report, workdir: Path, sizes: Sizes) -> None:
    decided, asked = throughput_batches(workdir, "throughput", sizes.decisions)
    report.add(
        Metric(
            "decision throughput",
            "asks_per_second",
            f"POST /v1/requests (new requests), {CLIENTS} concurrent agents, SQLite, 1 worker",
            asked.per_second,
            "requests/s",
            None,
            {"requests": asked.calls, "seconds": asked.seconds, "server_cpu_ms_per_request": asked.cpu_ms},
        )
    )
    report.add(
        Metric(
            "decision throughput",
            "decisions_per_second",
            f"POST …/decision, {CLIENTS} concurrent clients, SQLite, 1 worker",
            decided.per_second,
            "decisions/s",
            Target(">=", THROUGHPUT_TARGET),
            {"decisions": decided.calls, "seconds": decided.seconds},
        )
    )
    report.add(
        Metric(
            "decision throughput",
            "decision_server_cpu_ms",
            "POST …/decision: server process CPU per decision",
            decided.cpu_ms,
            "ms",
            None,
            {"server_cpu_seconds": decided.server_cpu_seconds, "decisions": decided.calls},
        )
    )
    report.add(
        Metric(
            "decision throughput",
            "decisions_per_core_second",
            "POST …/decision: decisions/s per core of server CPU (1000 / CPU ms), load-independent",
            decided.per_core_second,
            "decisions/s",
            Target(">=", PER_CORE_TARGET),
        )
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
        measure_throughput(report, workdir, sizes)
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
