"""Retention: how long `purge` takes and how long it holds the database, and what it costs a
writer working meanwhile.

    .venv/bin/python bench/purge.py [--quick] [--requests N] [--rounds R] [--no-postgres] [--dsn DSN]

Each round fills a fresh database with N closed requests (a webhook subscribed, so each has an
outbox row and a delivery attempt) and N/10 open ones, then purges them in batches of 500 (the
export written to a temporary file) while one thread creates and decides requests. A round
without the purge (the same writer, for the same time) is run beside each, alternating which
goes first. Reported: the purge's rows/s, its longest write transaction (how long one batch
holds the database), and the writer's cycle p50/p99/max with and without the purge (the ratio
is what a purge costs a live server). Prints a table and writes bench/results/purge.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from signoff import Approve
from signoff._util import utcnow
from signoff.requests import NewRequest
from signoff.store import SQLiteStore, Store
from signoff.store.outbox_ops import Outcome

RESULTS_PATH = Path(__file__).resolve().parent / "results" / "purge.json"
LOCAL_DSN = "postgresql://postgres@127.0.0.1:5432/test"


def new_request(thread: str, call: str) -> NewRequest:
    return NewRequest(
        thread_id=thread,
        tool_call_id=call,
        tool_name="refund",
        args={"amount": 10},
        description="Refund",
        deadline=utcnow() + timedelta(hours=1),
    )


def fill(store: Store, count: int) -> None:
    store.add_webhook("http://127.0.0.1:9/x", events=["request.decided"], allow_private=True, actor="bench")
    for n in range(count):
        with store.grouped():
            request, _ = store.create_request(new_request("old", f"c{n}"))
            store.decide(request.id, Approve(), actor="alice")
    sent = Outcome(state="sent", result="sent", target="x", next_at=utcnow())
    while rows := store.claim_outbox("bench", lease=timedelta(minutes=5), limit=500):
        store.finish_outbox_many([(row, sent) for row in rows], "bench")
    for n in range(count // 10):
        store.create_request(new_request("open", f"o{n}"))


@contextmanager
def timed_writes(store: Store, spans: list[float]) -> Iterator[None]:
    """Time every write transaction `store` opens (on this instance only)."""
    original = store._write

    @contextmanager
    def write() -> Iterator[Any]:
        start = time.perf_counter()
        with original() as tx:
            yield tx
        spans.append(time.perf_counter() - start)

    store._write = write  # type: ignore[method-assign]
    try:
        yield
    finally:
        store._write = original  # type: ignore[method-assign]


def writer(store: Store, stop: threading.Event, cycles: list[float]) -> None:
    thread = f"w-{uuid.uuid4().hex[:8]}"
    n = 0
    while not stop.is_set():
        start = time.perf_counter()
        request, _ = store.create_request(new_request(thread, f"w{n}"))
        store.decide(request.id, Approve(), actor="alice")
        cycles.append(time.perf_counter() - start)
        n += 1


def one_round(open_fresh: Callable[[], Store], count: int, purge: bool, seconds: float) -> dict[str, Any]:
    store = open_fresh()
    with tempfile.TemporaryDirectory() as folder:
        try:
            fill(store, count)
            cutoff = utcnow()
            cycles: list[float] = []
            spans: list[float] = []
            stop = threading.Event()
            thread = threading.Thread(target=writer, args=(store, stop, cycles))
            thread.start()
            start = time.perf_counter()
            report = None
            if purge:
                with timed_writes(store, spans):
                    report = store.purge(
                        cutoff, export=Path(folder) / "audit.jsonl", keep_audit=False, actor="bench"
                    )
            elapsed = time.perf_counter() - start
            time.sleep(max(0.0, seconds - elapsed))
            stop.set()
            thread.join()
            result: dict[str, Any] = {
                "writer_cycles": len(cycles),
                "writer_p50_ms": statistics.median(cycles) * 1000,
                "writer_p99_ms": statistics.quantiles(cycles, n=100, method="inclusive")[98] * 1000,
                "writer_max_ms": max(cycles) * 1000,
            }
            if report is not None:
                rows = sum(report.counts().values())
                result |= {
                    "purge_seconds": elapsed,
                    "rows": rows,
                    "rows_per_s": rows / elapsed,
                    "batches": report.batches,
                    "longest_tx_ms": max(spans) * 1000,
                    "ok": store.verify_audit().ok,
                    **report.counts(),
                }
            return result
        finally:
            store.close()


def backend(name: str, open_fresh: Callable[[], Store], count: int, rounds: int) -> dict[str, Any]:
    with_purge: list[dict[str, Any]] = []
    without: list[dict[str, Any]] = []
    for index in range(rounds):
        order = (True, False) if index % 2 == 0 else (False, True)
        for purge in order:
            seconds = statistics.median(r["purge_seconds"] for r in with_purge) if with_purge else 3.0
            (with_purge if purge else without).append(one_round(open_fresh, count, purge, seconds))

    def med(results: list[dict[str, Any]], key: str) -> float:
        return statistics.median(r[key] for r in results)

    return {
        "backend": name,
        "requests": count,
        "rounds": rounds,
        "rows": with_purge[0]["rows"],
        "purge_seconds": [r["purge_seconds"] for r in with_purge],
        "rows_per_s": med(with_purge, "rows_per_s"),
        "longest_tx_ms": max(r["longest_tx_ms"] for r in with_purge),
        "batches": with_purge[0]["batches"],
        "verified": all(r["ok"] for r in with_purge),
        "writer_p50_ms": {"purging": med(with_purge, "writer_p50_ms"), "idle": med(without, "writer_p50_ms")},
        "writer_p99_ms": {"purging": med(with_purge, "writer_p99_ms"), "idle": med(without, "writer_p99_ms")},
        "writer_max_ms": {
            "purging": max(r["writer_max_ms"] for r in with_purge),
            "idle": max(r["writer_max_ms"] for r in without),
        },
        "counts": {key: with_purge[0][key] for key in ("requests", "executions", "outbox", "attempts")},
    }


def sqlite_opener(folder: Path) -> Callable[[], Store]:
    def open_fresh() -> Store:
        return SQLiteStore(folder / f"{uuid.uuid4().hex}.db")

    return open_fresh


def postgres_opener(dsn: str, schemas: list[str]) -> Callable[[], Store]:
    from signoff.store.postgres import PostgresStore

    def open_fresh() -> Store:
        schema = f"bench_purge_{uuid.uuid4().hex[:12]}"
        schemas.append(schema)
        return PostgresStore(dsn, schema=schema, max_size=4)

    return open_fresh


def drop_schemas(dsn: str, schemas: list[str]) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True) as connection:
        for schema in schemas:
            connection.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 300 requests, one round")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument(
        "--dsn",
        default=os.environ.get("SIGNOFF_BENCH_POSTGRES_DSN")
        or os.environ.get("SIGNOFF_TEST_POSTGRES_DSN")
        or LOCAL_DSN,
    )
    options = parser.parse_args()
    if options.quick:
        options.requests, options.rounds = 300, 1
    results = []
    with tempfile.TemporaryDirectory() as folder:
        results.append(backend("sqlite", sqlite_opener(Path(folder)), options.requests, options.rounds))
    if not options.no_postgres:
        schemas: list[str] = []
        try:
            results.append(
                backend("postgres", postgres_opener(options.dsn, schemas), options.requests, options.rounds)
            )
        finally:
            drop_schemas(options.dsn, schemas)
    print(
        f"{'backend':<9} {'rows':>7} {'rows/s':>8} {'longest tx':>11} {'writer p99 idle→purging':>26} "
        f"{'writer max idle→purging':>26}"
    )
    for r in results:
        p99, most = r["writer_p99_ms"], r["writer_max_ms"]
        print(
            f"{r['backend']:<9} {r['rows']:>7} {r['rows_per_s']:>8.0f} {r['longest_tx_ms']:>9.1f}ms "
            f"{p99['idle']:>10.1f} → {p99['purging']:>6.1f} ms ({p99['purging'] / p99['idle']:.2f}x) "
            f"{most['idle']:>8.1f} → {most['purging']:>6.1f} ms"
        )
    RESULTS_PATH.write_text(
        json.dumps(
            {
                "machine": {
                    "python": platform.python_version(),
                    "cpus": os.cpu_count(),
                    "load": os.getloadavg(),
                },
                "results": results,
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"wrote {RESULTS_PATH}")


if __name__ == "__main__":
    main()
