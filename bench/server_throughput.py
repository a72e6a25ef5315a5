"""Section 2 of bench/server.py: decisions and new requests per second through the API, on a fresh
`signoff serve` (SQLite, one worker), with the server process's CPU per call."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from core import Metric, Report, Target
from keepalive import CLIENTS, post_all
from process_cpu import cpu_seconds, thread_cpu_seconds
from server_running import Running, serving
from server_stream import admin_stream
from signoff._util import utcnow
from signoff.requests import NewRequest
from signoff.rules.model import RequestRule
from signoff.store import SQLiteStore

THROUGHPUT_TARGET = 500.0
PER_CORE_TARGET = 1000.0
"""Issue 19: decisions through the API >= 1,000/s on SQLite, one process: on one core's CPU."""


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
    """One batch of calls: its wall time, the server process's CPU time over it (in all and by
    thread) and the load generator's (this process's)."""

    calls: int
    seconds: float
    server_cpu_seconds: float
    server_threads: dict[str, float]
    """Server CPU seconds by thread name (`main` runs the event loop)."""
    client_cpu_seconds: float

    @property
    def per_second(self) -> float:
        return self.calls / self.seconds

    @property
    def cpu_ms(self) -> float:
        """Server CPU milliseconds per call."""
        return self.server_cpu_seconds * 1000 / self.calls

    @property
    def client_cpu_ms(self) -> float:
        """Load generator CPU milliseconds per call."""
        return self.client_cpu_seconds * 1000 / self.calls

    def thread_cpu_ms(self) -> dict[str, float]:
        """Server CPU milliseconds per call, by thread (those that used at least 1 µs a call)."""
        per_call = {name: seconds * 1000 / self.calls for name, seconds in self.server_threads.items()}
        return {name: ms for name, ms in sorted(per_call.items(), key=lambda item: -item[1]) if ms >= 0.001}

    @property
    def per_core_second(self) -> float:
        """Calls one core of the server would answer per second at this CPU cost."""
        return 1000 / self.cpu_ms if self.cpu_ms else float("inf")


Snapshot = tuple[float, dict[str, float], float]
"""The server's CPU seconds, by thread, and this process's."""


def snapshot(running: Running) -> Snapshot:
    return cpu_seconds(running.pid), thread_cpu_seconds(running.pid), time.process_time()


def batch_since(running: Running, before: Snapshot, calls: int, seconds: float) -> Batch:
    cpu_before, threads_before, client_before = before
    client = time.process_time() - client_before
    cpu, threads = cpu_seconds(running.pid) - cpu_before, thread_cpu_seconds(running.pid)
    by_thread = {name: used - threads_before.get(name, 0.0) for name, used in threads.items()}
    return Batch(calls, seconds, cpu, by_thread, client)


def timed_batch(running: Running, calls: int, post: Callable[[], tuple[float, int]], what: str) -> Batch:
    before = snapshot(running)
    seconds, failures = post()
    if failures:
        raise RuntimeError(f"{failures} of {calls} {what} failed")
    return batch_since(running, before, calls, seconds)


def throughput_batches(
    workdir: Path,
    name: str,
    decisions: int,
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    stream: bool = False,
) -> tuple[Batch, Batch]:
    """(decisions, asks): `decisions` POST …/decision and as many POST /v1/requests, each after
    200 warm-up calls, on a fresh `signoff serve` (run with `env` and `cwd`, e.g. another checkout's).
    With `stream`, an admin's SSE stream is open while the decisions run (warm-ups included)."""
    with serving(workdir, name, env=env, cwd=cwd) as running:
        warm = prepare_pending(running.db, 200, "alice", "warm-up")
        ids = prepare_pending(running.db, decisions, "alice", "throughput")
        if stream:
            decided = asyncio.run(streamed_decisions(running, warm, ids))
        else:
            asyncio.run(decide_all(running.url, running.person_token, warm))
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


async def streamed_decisions(running: Running, warm: list[str], ids: list[str]) -> Batch:
    """The warm-up and the timed decisions with an admin's stream open, timed until the stream
    has had every decision's event (the server's sending them is part of each decision's cost)."""
    async with admin_stream(running.url, running.admin_token) as stream:
        await decide_all(running.url, running.person_token, warm)
        if not await stream.until_decided(len(warm)):
            raise RuntimeError(f"the stream had {stream.decided} of {len(warm)} warm-up decisions")
        before = snapshot(running)
        seconds, failures = await decide_all(running.url, running.person_token, ids)
        if not await stream.until_decided(len(warm) + len(ids)):
            raise RuntimeError(f"the stream had {stream.decided - len(warm)} of {len(ids)} decisions")
        if failures:
            raise RuntimeError(f"{failures} of {len(ids)} decisions failed")
        return batch_since(running, before, len(ids), seconds)


def measure_throughput(report: Report, workdir: Path, decisions: int) -> None:
    decided, asked = throughput_batches(workdir, "throughput", decisions)
    report.add(
        Metric(
            "decision throughput",
            "asks_per_second",
            f"POST /v1/requests (new requests), {CLIENTS} concurrent agents, SQLite, 1 worker",
            asked.per_second,
            "requests/s",
            None,
            {
                "requests": asked.calls,
                "seconds": asked.seconds,
                "server_cpu_ms_per_request": asked.cpu_ms,
                "by_thread_ms": asked.thread_cpu_ms(),
            },
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
            {
                "server_cpu_seconds": decided.server_cpu_seconds,
                "decisions": decided.calls,
                "by_thread_ms": decided.thread_cpu_ms(),
            },
        )
    )
    report.add(
        Metric(
            "decision throughput",
            "decision_client_cpu_ms",
            "POST …/decision: load generator (32 raw keep-alive connections) CPU per decision",
            decided.client_cpu_ms,
            "ms",
            None,
            {"client_cpu_seconds": decided.client_cpu_seconds, "asks_client_cpu_ms": asked.client_cpu_ms},
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
