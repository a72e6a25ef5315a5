"""Audited writes/s from 16 connections straight against PostgreSQL: the sealed audit log against
the head-row lock it replaced (DESIGN §11). No web stack: this shows the serialisation point
itself, which a 2-core machine running several replicas cannot.

    .venv/bin/python bench/audit_writes.py [--quick] [--dsn DSN] [--connections 16]

Each write is one statement in autocommit, as signoff's fused create and decide statements are: a
row inserted into a table of its own and its audit entry, committed (synchronous_commit as the
server has it). "head-row lock": the entry is appended to the hash chain under the audit_head row's
lock, held until the commit (signoff's fused statements before the sealed log). "sealed": the
entry is queued (as they do now), and a sealer thread seals every 0.2 s as each server does; the
lag of every batch it seals (sealed_at minus the oldest entry's time) is reported. Rounds
alternate the two sides (A B, B A, ...); the ratio is taken round by round. Prints a table and
writes bench/results/audit-writes.json.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg

from machine import machine_info
from metrics import Metric, Report, Target, percentile
from output import print_report, progress, write_results
from postgres_server import drop_schema
from signoff.store.core import AuditNote
from signoff.store.postgres import PostgresStore

RESULTS = Path(__file__).resolve().parent / "results" / "audit-writes.json"
HEAD_ROW = "head-row lock"
SEALED = "sealed log"
TARGET = 3.0
SEAL_INTERVAL = 0.2


def default_dsn() -> str:
    return (
        os.environ.get("SIGNOFF_BENCH_POSTGRES_DSN")
        or os.environ.get("SIGNOFF_TEST_POSTGRES_DSN")
        or "postgresql://postgres@127.0.0.1:5432/test"
    )


HEAD_ROW_WRITE = """
WITH r AS (INSERT INTO bench_rows (id, slot) VALUES (%(id)s, %(slot)s) RETURNING id)
INSERT INTO audit_log (seq, at, actor, channel, action, request_id, data, prev_hash, hash)
SELECT head.seq + 1, %(at)s, %(actor)s, %(channel)s, %(action)s, r.id, %(data_json)s, head.hash,
       encode(sha256(convert_to(CAST(head.seq + 1 AS text) || '|' || head.hash || '|' || %(payload)s,
                                'UTF8')), 'hex')
FROM r, (SELECT seq, hash FROM audit_head WHERE id = 1 FOR UPDATE) AS head
"""
"""One audited write as signoff's fused statements made it before the sealed log: the row and its
entry in one statement (autocommit), the entry chained under the head row's lock until the commit."""
SEALED_WRITE = """
WITH r AS (INSERT INTO bench_rows (id, slot) VALUES (%(id)s, %(slot)s) RETURNING id)
INSERT INTO audit_queue (at, actor, channel, action, request_id, data, payload)
SELECT %(at)s, %(actor)s, %(channel)s, %(action)s, r.id, %(data_json)s, %(payload)s FROM r
"""
"""The same write as the fused statements make it now: the entry queued, nothing shared locked."""


def writer(dsn: str, schema: str, query: str, stop: threading.Event, counts: list[int], slot: int) -> None:
    with psycopg.connect(dsn, options=f"-csearch_path={schema}", autocommit=True) as connection:
        while not stop.is_set():
            row_id = uuid.uuid4().hex
            note = AuditNote("bench.write", "bench", "bench", row_id, {"slot": slot})
            params: dict[str, Any] = note.params()
            params.update(data_json=params["data_json"].text, id=row_id, slot=slot)
            connection.execute(query, params)
            counts[slot] += 1


def sealer(dsn: str, schema: str, stop: threading.Event) -> None:
    with psycopg.connect(dsn, options=f"-csearch_path={schema}", autocommit=True) as connection:
        while not stop.is_set():
            connection.execute("SELECT audit_seal(1000, false)")
            stop.wait(SEAL_INTERVAL)


def run_round(dsn: str, schema: str, side: str, connections: int, seconds: float) -> dict[str, Any]:
    query = HEAD_ROW_WRITE if side == HEAD_ROW else SEALED_WRITE
    stop = threading.Event()
    counts = [0] * connections
    threads = [
        threading.Thread(target=writer, args=(dsn, schema, query, stop, counts, slot), daemon=True)
        for slot in range(connections)
    ]
    if side == SEALED:
        threads.append(threading.Thread(target=sealer, args=(dsn, schema, stop), daemon=True))
    with psycopg.connect(dsn, options=f"-csearch_path={schema}", autocommit=True) as connection:
        row = connection.execute("SELECT coalesce(max(head_seq), 0) FROM audit_seals").fetchone()
        seals_before = int(row[0]) if row else 0
        for thread in threads:
            thread.start()
        time.sleep(0.5)  # connections open, warm
        start_counts, start = sum(counts), time.monotonic()
        time.sleep(seconds)
        writes = sum(counts) - start_counts
        elapsed = time.monotonic() - start
        stop.set()
        for thread in threads:
            thread.join(30)
        lags: list[float] = []
        if side == SEALED:
            lags = [
                float(lag)
                for (lag,) in connection.execute(
                    "SELECT extract(epoch FROM sealed_at - CAST(oldest_at AS timestamptz)) FROM audit_seals "
                    "WHERE head_seq > %s",
                    (seals_before,),
                )
            ]
            drained = time.monotonic()
            connection.execute("SELECT audit_seal(1000000, true)")
            lags.append(time.monotonic() - drained)
    return {"writes_per_second": writes / elapsed, "seal_lags": lags}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter rounds")
    parser.add_argument("--dsn", default=default_dsn())
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--output", type=Path, default=RESULTS)
    options = parser.parse_args(argv)
    rounds, seconds = (2, 1.5) if options.quick else (6, 4.0)
    schema = f"signoff_bench_{uuid.uuid4().hex[:8]}"
    PostgresStore(options.dsn, schema=schema, max_size=1).close()
    with psycopg.connect(options.dsn, options=f"-csearch_path={schema}", autocommit=True) as connection:
        connection.execute("CREATE TABLE bench_rows (id TEXT PRIMARY KEY, slot INTEGER NOT NULL)")
    rates: dict[str, list[float]] = {HEAD_ROW: [], SEALED: []}
    lags: list[float] = []
    try:
        for index in range(rounds):
            order = [HEAD_ROW, SEALED] if index % 2 == 0 else [SEALED, HEAD_ROW]
            for side in order:
                progress(f"round {index + 1}/{rounds}: {side}")
                result = run_round(options.dsn, schema, side, options.connections, seconds)
                rates[side].append(result["writes_per_second"])
                lags.extend(result["seal_lags"])
    finally:
        drop_schema(options.dsn, schema)
    ratios = [sealed / head for sealed, head in zip(rates[SEALED], rates[HEAD_ROW], strict=True)]
    section = f"PostgreSQL, audited writes from {options.connections} connections"
    report = Report()
    for side, values in rates.items():
        report.add(
            Metric(
                section,
                f"{'sealed' if side == SEALED else 'head_row'}_writes_per_second",
                f"{side}: writes/s (median of rounds)",
                statistics.median(values),
                "/s",
                details={"min": min(values), "max": max(values), "rounds": values},
            )
        )
    report.add(
        Metric(
            section,
            "sealed_over_head_row",
            "sealed log / head-row lock (round by round, median)",
            statistics.median(ratios),
            "x",
            Target(">=", TARGET),
            {"min": min(ratios), "max": max(ratios)},
        )
    )
    report.add(
        Metric(
            section,
            "seal_lag_max",
            "sealing lag behind the oldest entry of each batch: max",
            max(lags),
            "s",
            Target("<=", 1.0),
            {"p50": percentile(lags, 0.5), "p99": percentile(lags, 0.99), "batches": len(lags)},
        )
    )
    report.notes.append(
        f"{rounds} rounds of {seconds:g} s per side, in turns; each write is a row and its audit entry "
        "in one statement (autocommit), as signoff's fused writes. The sealer seals every 0.2 s, as each "
        "server does."
    )
    write_results(report, machine_info(options.dsn), options.quick, options.output)
    print_report(report, "Audited writes: the sealed log against the head-row lock")
    return 0


if __name__ == "__main__":
    sys.exit(main())
