"""Decisions/s through the API with 1, 2 and 3 `signoff serve` replicas on one PostgreSQL.

    .venv/bin/python bench/replicas.py [--quick] [--dsn DSN]

Each configuration starts its replicas (one uvicorn worker each) on a fresh set of pending
requests in one schema; 32 clients (asyncio, one keep-alive connection each, spread over the
replicas in turn) approve distinct requests; decisions per second of wall time over the batch.
Configurations run in turns (1 2 3, 3 2 1, ...), and each ratio to one replica is taken round by
round. The replicas, PostgreSQL and the clients share this machine's cores: on a machine with
fewer cores than replicas (plus the database), more replicas cannot add throughput, only
availability; the table says how many cores it ran on. Prints a table and writes
bench/results/replicas.json.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import httpx

from keepalive import CLIENTS, KeepAliveConnection
from machine import machine_info
from metrics import Metric, Report, Target
from output import print_report, progress, write_results
from postgres_server import drop_schema
from serving import free_port
from signoff._util import utcnow
from signoff.requests import NewRequest
from signoff.rules.model import RequestRule
from signoff.store.postgres import PostgresStore

RESULTS_PATH = Path(__file__).resolve().parent / "results" / "replicas.json"
TWO_REPLICAS_TARGET = 1.7
"""Decisions/s with two replicas over one, where the machine has the cores for them."""


def default_dsn() -> str:
    return (
        os.environ.get("SIGNOFF_BENCH_POSTGRES_DSN")
        or os.environ.get("SIGNOFF_TEST_POSTGRES_DSN")
        or "postgresql://postgres@127.0.0.1:5432/test"
    )


@contextmanager
def replicas(db: str, count: int) -> Iterator[list[str]]:
    processes: list[subprocess.Popen[bytes]] = []
    urls: list[str] = []
    try:
        for _ in range(count):
            port = free_port()
            command = [sys.executable, "-m", "signoff.cli", "serve", "--db", db, "--port", str(port)]
            processes.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            urls.append(f"http://127.0.0.1:{port}")
        for url, process in zip(urls, processes, strict=True):
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("signoff serve did not start")
                time.sleep(0.1)
        yield urls
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(30)


def prepare_pending(store: PostgresStore, count: int, thread: str) -> list[str]:
    ids = []
    for index in range(count):
        request, _ = store.create_request(
            NewRequest(
                thread_id=thread,
                tool_call_id=f"t{index}",
                tool_name="send_email",
                args={"to": "bob@example.com"},
                description="Send an email",
                deadline=utcnow() + timedelta(hours=1),
                rule=RequestRule(approvers=("alice",)),
                actor="bot",
            )
        )
        ids.append(request.id)
    return ids


async def decide_all(urls: list[str], token: str, ids: list[str]) -> tuple[float, int]:
    pending = list(reversed(ids))
    failures = 0
    connections = [await KeepAliveConnection.open(urls[n % len(urls)]) for n in range(CLIENTS)]

    async def worker(connection: KeepAliveConnection) -> None:
        nonlocal failures
        while pending:
            request_id = pending.pop()
            status, answer = await connection.post_json(
                f"/v1/requests/{request_id}/decision", b'{"type": "approve"}', token
            )
            if status != 200:
                failures += 1
                if failures == 1:
                    progress(f"a decision failed: {status} {answer[:300]!r}")

    started = time.perf_counter()
    await asyncio.gather(*(worker(connection) for connection in connections))
    elapsed = time.perf_counter() - started
    for connection in connections:
        connection.close()
    return elapsed, failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer decisions and rounds")
    parser.add_argument("--dsn", default=default_dsn())
    parser.add_argument("--output", type=Path, default=RESULTS_PATH)
    options = parser.parse_args(argv)
    rounds, decisions = (2, 400) if options.quick else (4, 2000)
    schema = f"signoff_bench_{uuid.uuid4().hex[:8]}"
    store = PostgresStore(options.dsn, schema=schema, max_size=2)
    db = f"{options.dsn}?options=-csearch_path%3D{schema}"
    rates: dict[int, list[float]] = {1: [], 2: [], 3: []}
    failed = 0
    try:
        store.add_user("bot", role="agent", actor="bench")
        store.add_user("alice", role="member", actor="bench")
        token, _ = store.issue_credential("token", "alice", actor="bench")
        for index in range(rounds):
            order = [1, 2, 3] if index % 2 == 0 else [3, 2, 1]
            for count in order:
                progress(f"round {index + 1}/{rounds}: {count} replica(s)")
                ids = prepare_pending(store, decisions, f"round-{index}-{count}")
                warm = prepare_pending(store, 100, f"warm-{index}-{count}")
                with replicas(db, count) as urls:
                    asyncio.run(decide_all(urls, token, warm))
                    elapsed, failures = asyncio.run(decide_all(urls, token, ids))
                failed += failures
                rates[count].append(decisions / elapsed)
    finally:
        store.close()
        drop_schema(options.dsn, schema)
    cores = os.cpu_count() or 1
    section = f"PostgreSQL, decisions/s through the API, {CLIENTS} clients, {cores} cores"
    report = Report()
    for count, values in rates.items():
        report.add(
            Metric(
                section,
                f"replicas_{count}_decisions_per_second",
                f"{count} replica{'s' if count > 1 else ''}: decisions/s (median of rounds)",
                statistics.median(values),
                "/s",
                details={"min": min(values), "max": max(values), "rounds": values},
            )
        )
    for count in (2, 3):
        ratios = [rate / one for rate, one in zip(rates[count], rates[1], strict=True)]
        enough_cores = cores >= 2 * count + 1  # a replica and its share of the database each
        report.add(
            Metric(
                section,
                f"replicas_{count}_over_one",
                f"{count} replicas / one (round by round, median)",
                statistics.median(ratios),
                "x",
                Target(">=", TWO_REPLICAS_TARGET) if count == 2 and enough_cores else None,
                {"min": min(ratios), "max": max(ratios)},
            )
        )
    report.notes.append(
        f"{rounds} rounds of {decisions} decisions per configuration, configurations in turns. "
        f"Replicas, PostgreSQL and the clients share {cores} cores: the 2-replica target (≥ "
        f"{TWO_REPLICAS_TARGET}x) applies where the machine has cores for two replicas and the database "
        "(5 or more); below that, replicas buy availability, and the ratio shows what they cost."
    )
    if failed:
        report.notes.append(f"{failed} decision(s) failed.")
    write_results(report, machine_info(options.dsn), options.quick, options.output)
    print_report(report, "Decisions/s with 1, 2 and 3 replicas on one PostgreSQL")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
