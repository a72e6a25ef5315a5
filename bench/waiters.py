"""Idle waiters: what 10,000 agents waiting for a person cost while nobody decides, and how soon
each is still woken once its decision comes.

    .venv/bin/python bench/waiters.py [--quick] [--waiters N] [--compare REF] [--no-postgres]

Prints one table (measurement, value, target, met) and writes bench/results/waiters.json.

Per backend, the waiters run in a process of their own (this file with `--role waiters`): N
coroutines in one event loop, each in `gate.areview` on its own pending request (made
beforehand, by this process, for the agent's user). Once every waiter is subscribed and a settle
period has passed, the CPU time (user + system, /proc) used over an idle window gives the cores
that waiting costs: of the waiters' process, and through a Client also of the `signoff serve`
process, and on PostgreSQL also of the PostgreSQL backends serving the waiters' process. Then
this process decides every request, paced, and each waiter's wake-up is measured from its
decision's commit (the decide call returning) to its `areview` returning, on CLOCK_MONOTONIC
(system-wide on Linux).

Backends: a local SQLite file (the decisions come from this process: another process, through
the file), `Gate(Client)` against `signoff serve` on SQLite (the decisions through the API, as a
person), and local PostgreSQL (a fresh schema, dropped at the end).

--compare REF runs the same scenarios with the code of git ref REF too (extracted to a
temporary directory), in the same run, so machine noise hits both alike; the rows say which code.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_ref import ROOT, Code, extract
from process_cpu import Idle, measure_idle, postgres_backends
from serving import signoff_serve

BENCH = Path(__file__).resolve().parent
RESULTS_PATH = BENCH / "results" / "waiters.json"
IDLE_TARGET_CORES = 0.05
WAKE_TARGET_S = 1.0
THREAD = "idle-waiters"
RULES_YAML = "tools: {deploy: {requires_approval: true, approvers: [alice]}}"


@dataclass(frozen=True)
class Sizes:
    waiters: int
    settle: float
    idle: float
    decisions_per_second: float


FULL = Sizes(waiters=10_000, settle=5.0, idle=15.0, decisions_per_second=100.0)
QUICK = Sizes(waiters=1_000, settle=2.0, idle=5.0, decisions_per_second=100.0)


# -- the waiters' process -------------------------------------------------------------------------


def waiters_role(options: argparse.Namespace) -> int:
    """N coroutines in `gate.areview`; prints `ready` once all are subscribed and have read their
    request once (from then on they are idle), then, when all are decided, one JSON line: each
    waiter's resume time (CLOCK_MONOTONIC)."""
    from signoff import Client, Gate, RuleSet, Scope, ToolCall, open_store

    backend: Any = Client(options.server, options.token) if options.server else open_store(options.db)
    reads = [0]
    reads_lock = threading.Lock()
    get_request = backend.get_request

    def counted(request_id: str) -> Any:
        with reads_lock:
            reads[0] += 1
        return get_request(request_id)

    backend.get_request = counted
    gate = Gate(backend, rules=RuleSet.from_yaml(RULES_YAML))
    resumed: dict[int, float] = {}
    statuses: dict[str, int] = {}

    async def one(index: int) -> None:
        call = ToolCall(name="deploy", args={"n": index}, id=f"w{index}")
        outcome = await gate.areview(call, Scope(thread_id=THREAD))
        resumed[index] = time.monotonic()
        statuses[outcome.status] = statuses.get(outcome.status, 0) + 1

    async def run() -> None:
        tasks = [asyncio.create_task(one(index)) for index in range(options.count)]
        while len(backend.hub.watched()) < options.count or reads[0] < options.count:
            await asyncio.sleep(0.05)
        print("ready", flush=True)
        await asyncio.gather(*tasks)

    asyncio.run(run())
    print(json.dumps({"resumed": resumed, "statuses": statuses}), flush=True)
    backend.close()
    return 0


# -- one scenario -----------------------------------------------------------------------------------


@dataclass
class Outcome:
    idle: Idle
    latencies: list[float]
    statuses: dict[str, int]


def python_env(code: Code) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(code.src), "PYTHONUNBUFFERED": "1"}


@contextmanager
def waiters_process(
    code: Code, count: int, *, db: str | None = None, server: str | None = None, token: str | None = None
) -> Iterator[subprocess.Popen[str]]:
    command = [sys.executable, str(Path(__file__).resolve()), "--role", "waiters", "--count", str(count)]
    if db is not None:
        command += ["--db", db]
    if server is not None and token is not None:
        command += ["--server", server, "--token", token]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=python_env(code), cwd=ROOT
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError(f"the waiters did not start (exit {process.poll()}): {line!r}")
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(30)


def pending_requests(store: Any, count: int, creator: str) -> list[str]:
    """`count` pending requests made by `creator`, in commits of 500: the identity the waiters'
    gate finds its calls' requests under (a local store's `agent`; through a server, the agent's
    user), else each waiter would ask anew instead of waiting on the request made here."""
    from datetime import timedelta

    from signoff._util import utcnow
    from signoff.requests import NewRequest
    from signoff.rules.model import RequestRule

    ids: list[str] = []
    while len(ids) < count:
        with store.grouped():
            for index in range(len(ids), min(len(ids) + 500, count)):
                request, _ = store.create_request(
                    NewRequest(
                        thread_id=THREAD,
                        tool_call_id=f"w{index}",
                        tool_name="deploy",
                        args={"n": index},
                        description="deploy",
                        deadline=utcnow() + timedelta(hours=24),
                        rule=RequestRule(approvers=("alice",)),
                        actor=creator,
                    )
                )
                ids.append(request.id)
    return ids


def paced(ids: list[str], per_second: float) -> Iterator[tuple[int, str]]:
    started = time.monotonic()
    for index, request_id in enumerate(ids):
        wait = started + index / per_second - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        yield index, request_id


def finish(process: subprocess.Popen[str], decided: dict[int, float], idle: Idle) -> Outcome:
    assert process.stdout is not None
    result = json.loads(process.stdout.readline())
    process.wait(60)
    resumed = {int(index): at for index, at in result["resumed"].items()}
    latencies = [resumed[index] - decided[index] for index in decided]
    return Outcome(idle, latencies, result["statuses"])


def local_scenario(
    code: Code, url: str, store: Any, sizes: Sizes, backends_dsn: str | None = None
) -> Outcome:
    from signoff import Approve
    from signoff.requests import LOCAL_CREATOR

    ids = pending_requests(store, sizes.waiters, LOCAL_CREATOR)
    with waiters_process(code, sizes.waiters, db=url) as process:
        time.sleep(sizes.settle)
        pids = {"waiters": [process.pid]}
        if backends_dsn is not None:
            pids["postgres"] = postgres_backends(backends_dsn, process.pid)
        idle = measure_idle(pids, sizes.idle)
        decided: dict[int, float] = {}
        for index, request_id in paced(ids, sizes.decisions_per_second):
            store.decide(request_id, Approve(), actor="alice", channel="bench")
            decided[index] = time.monotonic()
        return finish(process, decided, idle)


def sqlite_scenario(code: Code, workdir: Path, sizes: Sizes) -> Outcome:
    from signoff.store import SQLiteStore

    db = workdir / f"local-{code.label}.db"
    store = SQLiteStore(db)
    try:
        return local_scenario(code, f"sqlite:///{db}", store, sizes)
    finally:
        store.close()


def postgres_scenario(code: Code, dsn: str, sizes: Sizes) -> Outcome:
    import psycopg
    from psycopg import sql

    from signoff.store.postgres import PostgresStore

    schema = f"signoff_bench_{uuid.uuid4().hex[:10]}"
    store = PostgresStore(dsn, schema=schema)
    try:
        url = f"{dsn}{'&' if '?' in dsn else '?'}options=-csearch_path%3D{schema}"
        return local_scenario(code, url, store, sizes, backends_dsn=dsn)
    finally:
        store.close()
        with psycopg.connect(dsn, autocommit=True) as connection:
            connection.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def client_scenario(code: Code, workdir: Path, sizes: Sizes) -> Outcome:
    import httpx

    from signoff.store import SQLiteStore

    db = workdir / f"served-{code.label}.db"
    store = SQLiteStore(db)
    try:
        store.add_user("bot", role="agent", actor="bench")
        store.add_user("alice", role="member", actor="bench")
        agent_token, _ = store.issue_credential("token", "bot", actor="bench")
        person_token, _ = store.issue_credential("token", "alice", actor="bench")
        ids = pending_requests(store, sizes.waiters, "bot")
    finally:
        store.close()
    with (
        signoff_serve(db, env=python_env(code), cwd=ROOT) as (url, server),
        waiters_process(code, sizes.waiters, server=url, token=agent_token) as process,
    ):
        time.sleep(sizes.settle)
        idle = measure_idle({"waiters": [process.pid], "server": [server.pid]}, sizes.idle)
        decided: dict[int, float] = {}
        headers = {"Authorization": f"Bearer {person_token}"}
        with httpx.Client(base_url=url, headers=headers, timeout=60) as person:
            for index, request_id in paced(ids, sizes.decisions_per_second):
                answer = person.post(f"/v1/requests/{request_id}/decision", json={"type": "approve"})
                answer.raise_for_status()
                decided[index] = time.monotonic()
        return finish(process, decided, idle)


# -- the report -------------------------------------------------------------------------------------


BACKENDS = {"sqlite": "SQLite", "client": "Gate(Client) → signoff serve", "postgres": "PostgreSQL"}


def report_scenario(report: Any, backend: str, code: Code, outcome: Outcome, sizes: Sizes) -> None:
    from metrics import Metric, Target, percentile

    section = f"{sizes.waiters:,} idle waiters, {BACKENDS[backend]}"
    key = f"{backend}_{'now' if code.label == 'now' else 'baseline'}"
    who = f"{code.label}: "
    total = sum(outcome.idle.cores.values())
    parts = ", ".join(f"{name} {cores:.3f}" for name, cores in outcome.idle.cores.items())
    report.add(
        Metric(
            section,
            f"{key}_idle_cores",
            f"{who}idle CPU, all processes ({parts})",
            total,
            "cores",
            Target("<=", IDLE_TARGET_CORES),
            {"by_process": outcome.idle.cores, "window_s": sizes.idle},
        )
    )
    latencies = outcome.latencies
    report.add(
        Metric(
            section,
            f"{key}_wake_max",
            f"{who}decision → waiter resumed: max (p50 {percentile(latencies, 0.5) * 1000:.0f} ms, "
            f"p99 {percentile(latencies, 0.99) * 1000:.0f} ms)",
            max(latencies),
            "s",
            Target("<=", WAKE_TARGET_S),
            {
                "p50_s": percentile(latencies, 0.5),
                "p99_s": percentile(latencies, 0.99),
                "samples": len(latencies),
                "decisions_per_second": sizes.decisions_per_second,
                "outcomes": outcome.statuses,
            },
        )
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help=f"{QUICK.waiters:,} waiters and short windows")
    parser.add_argument("--waiters", type=int, help="how many waiters (default 10,000; --quick 1,000)")
    parser.add_argument(
        "--compare", metavar="REF", help="also measure the code of this git ref, in the same run"
    )
    parser.add_argument("--no-postgres", action="store_true", help="skip PostgreSQL")
    parser.add_argument(
        "--backends", default="sqlite,client,postgres", help="which of sqlite, client, postgres to measure"
    )
    parser.add_argument(
        "--dsn",
        default=os.environ.get("SIGNOFF_BENCH_POSTGRES_DSN")
        or os.environ.get("SIGNOFF_TEST_POSTGRES_DSN")
        or "postgresql://postgres@127.0.0.1:5432/test",
    )
    parser.add_argument("--output", type=Path, default=RESULTS_PATH)
    parser.add_argument("--role", choices=["waiters"], help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    parser.add_argument("--server", help=argparse.SUPPRESS)
    parser.add_argument("--token", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    options = parse_args(argv)
    if options.role == "waiters":
        return waiters_role(options)
    sys.path.insert(0, str(BENCH))
    from machine import machine_info
    from metrics import Report
    from output import print_report, progress, write_results
    from postgres_server import postgres_unavailable

    sizes = QUICK if options.quick else FULL
    if options.waiters:
        sizes = Sizes(options.waiters, sizes.settle, sizes.idle, sizes.decisions_per_second)
    skipped = (
        "PostgreSQL skipped: --no-postgres" if options.no_postgres else postgres_unavailable(options.dsn)
    )
    report = Report()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="signoff-bench-waiters-") as tmp:
        workdir = Path(tmp)
        codes = [Code("now", ROOT / "src")]
        if options.compare:
            (workdir / "baseline").mkdir()
            codes.append(extract(options.compare, workdir / "baseline"))
        chosen = set(options.backends.split(","))
        scenarios: list[tuple[str, Any]] = []
        if "sqlite" in chosen:
            scenarios.append(("sqlite", lambda code: sqlite_scenario(code, workdir, sizes)))
        if "client" in chosen:
            scenarios.append(("client", lambda code: client_scenario(code, workdir, sizes)))
        if "postgres" in chosen and skipped is None:
            scenarios.append(("postgres", lambda code: postgres_scenario(code, options.dsn, sizes)))
        elif "postgres" in chosen:
            report.notes.append(skipped)
        for backend, scenario in scenarios:
            for code in codes:
                progress(f"{sizes.waiters:,} idle waiters, {BACKENDS[backend]}, code: {code.label}")
                report_scenario(report, backend, code, scenario(code), sizes)
    report.notes.append(
        f"Idle: CPU time over a {sizes.idle:g} s window, {sizes.settle:g} s after all "
        f"{sizes.waiters:,} waiters were subscribed. Wake-up: every request decided, paced at "
        f"{sizes.decisions_per_second:g}/s, from its decide call returning to its areview returning."
    )
    if options.compare:
        report.notes.append(
            f"now: this checkout's code; {options.compare}: the code of that git ref, in the same run."
        )
    report.notes.append(f"Finished in {time.monotonic() - started:.0f} s; results in {options.output}.")
    print_report(report, f"signoff idle waiters ({'quick' if options.quick else 'full'} run)")
    write_results(report, machine_info(None if skipped else options.dsn), options.quick, options.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
