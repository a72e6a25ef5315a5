"""signoff against its peers, in one run: `python -m bench [SECTION ...] [--quick]`.

Sections (all by default; name some to run only those):
  fastpath  a call that needs no approval: signoff's @guard, gate.review and each adapter against
            LangChain's HumanInTheLoopMiddleware hook and Haystack's ConfirmationHook (NeverAskPolicy),
            on the thread's CPU clock
  wakeup    decision → waiting agent resumed (p50/p99): signoff in-process, across processes on
            SQLite, across replicas on PostgreSQL and through the API, against holdpoint and
            tollgate (SQLite, Redis) at their defaults, and tollgate on a private redis-server
            that fsyncs every write (signoff's durability)
  store     create + decide cycles/s: signoff on SQLite (synchronous FULL and NORMAL) against
            holdpoint and the raw drivers (sqlite3, psycopg)

Writes bench/results/peers-<section>.json, peers.md (the table the README shows) and a PNG plot
per section. The peers come from the `bench` extra (pip install 'signoff[bench]'); nothing is
installed at run time. PostgreSQL rows need --pg DSN or $SIGNOFF_TEST_POSTGRES_DSN (skipped, saying
so, without); the tollgate Redis row needs Redis (--redis URL, default redis://127.0.0.1:6379/0), the
fsync-always row the redis-server program too.
--with-scale also runs bench/scale.py and bench/server.py, and with PostgreSQL bench/replicas.py
(decisions/s with 1, 2, 3 replicas) and bench/audit_writes.py (the sealed log against the head-row
lock, 16 connections); slow, so off by default; their rows join the table.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the bench modules import each other by name

PEERS = ("holdpoint", "tollgate", "redis", "matplotlib", "langchain", "haystack", "pydantic_ai", "agents")
"""What the bench extra brings (the peers, the plots, the frameworks the fast path compares with)."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from peers_common import RESULTS_DIR, SECTIONS

    parser = argparse.ArgumentParser(
        prog="python -m bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "sections", nargs="*", metavar="SECTION", help=f"any of {', '.join(SECTIONS)} (default: all)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run (under a minute): too few rounds to trust"
    )
    parser.add_argument(
        "--pg",
        default=os.environ.get("SIGNOFF_TEST_POSTGRES_DSN"),
        help="PostgreSQL DSN (a fresh schema, dropped)",
    )
    parser.add_argument(
        "--redis",
        default=os.environ.get("SIGNOFF_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0"),
        help="Redis for tollgate's Redis store",
    )
    parser.add_argument(
        "--output", type=Path, default=RESULTS_DIR, help="where the JSON, Markdown and PNGs go"
    )
    parser.add_argument(
        "--with-scale", action="store_true", help="also run bench/scale.py and bench/server.py (slow)"
    )
    options = parser.parse_args(argv)
    if unknown := [name for name in options.sections if name not in SECTIONS]:
        parser.error(f"unknown section {', '.join(unknown)} (choose from {', '.join(SECTIONS)})")
    return options


def missing_peers() -> list[str]:
    return [name for name in PEERS if importlib.util.find_spec(name) is None]


def main(argv: list[str] | None = None) -> int:
    options = parse_args(argv)
    missing = missing_peers()
    if missing:
        print(
            f"python -m bench needs the bench extra ({', '.join(missing)} missing): "
            "pip install 'signoff[bench]'",
            file=sys.stderr,
        )
        return 2
    from machine import machine_info, package_version
    from output import progress
    from peers_common import FULL, QUICK, SECTIONS, load_now, read_sections, write_section
    from peers_fastpath import measure_fast_path
    from peers_render import render, scale_lines
    from peers_store import measure_store
    from peers_wakeup import measure_wakeup, redis_unavailable
    from postgres_server import postgres_unavailable

    sizes = QUICK if options.quick else FULL
    chosen = options.sections or list(SECTIONS)
    skipped: list[str] = []
    dsn: str | None = options.pg
    if dsn is None:
        skipped.append("PostgreSQL rows skipped: no --pg DSN and no $SIGNOFF_TEST_POSTGRES_DSN.")
    elif reason := postgres_unavailable(dsn):
        skipped.append(f"PostgreSQL rows {reason}")
        dsn = None
    redis_url: str | None = options.redis
    if reason := redis_unavailable(options.redis):
        skipped.append(reason)
        redis_url = None
    machine = machine_info(dsn)
    machine.update(holdpoint=package_version("holdpoint"), tollgate=package_version("tollgate"))
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="signoff-bench-peers-") as tmp:
        workdir = Path(tmp)
        for name in chosen:
            load_before = load_now()
            if name == "fastpath":
                section = measure_fast_path(workdir, sizes)
            elif name == "wakeup":
                section = measure_wakeup(workdir, sizes, dsn, redis_url)
            else:
                section = measure_store(workdir, sizes, dsn)
            section.notes += [note for note in skipped if name != "fastpath" and "PostgreSQL" in note]
            section.notes += [note for note in skipped if name == "wakeup" and "Redis" in note]
            write_section(section, options.output, machine, options.quick, load_before)
    scale = run_scale(options) if options.with_scale else []
    written = render(options.output, read_sections(options.output), scale_lines(options.output, scale))
    progress(f"peers: finished in {time.monotonic() - started:.0f} s; wrote {', '.join(map(str, written))}")
    print((options.output / "peers.md").read_text(encoding="utf-8"))
    return 0


def run_scale(options: argparse.Namespace) -> list[str]:
    """bench/scale.py and bench/server.py, writing beside the peers' results; their names."""
    import scale
    import server

    quick = ["--quick"] if options.quick else []
    postgres = ["--dsn", options.pg] if options.pg else ["--no-postgres"]
    scale.main([*quick, *postgres, "--output", str(options.output / "scale.json")])
    server.main([*quick, "--output", str(options.output / "server.json")])
    if not options.pg:
        return ["scale", "server"]
    import audit_writes
    import replicas

    replicas.main([*quick, "--dsn", options.pg, "--output", str(options.output / "replicas.json")])
    audit_writes.main([*quick, "--dsn", options.pg, "--output", str(options.output / "audit-writes.json")])
    return ["scale", "server", "replicas", "audit-writes"]


if __name__ == "__main__":
    sys.exit(main())
