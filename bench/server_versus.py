"""`POST …/decision` through the API: this checkout's server against another checkout's, in turns.

    .venv/bin/python bench/server_versus.py --baseline ../api-old [--rounds 4] [--decisions 2000]

Each round starts a fresh `signoff serve` (one uvicorn worker, SQLite) from each checkout in turn
(the baseline's with PYTHONPATH=<baseline>/src, so only signoff's own code differs), and measures
as bench/server.py does: decisions/s with 32 clients, the server process's CPU ms per decision
(the figure the machine's load does not move), the same by server thread (`main` is the event
loop, `signoff-writer` the grouped writer, `signoff-sqlite-` the change watcher, `uvloop` the
loop's thread pool) and the load generator's own CPU ms per decision (this process; the same
generator for both sides). With `--stream`, one admin's SSE stream is open while the decisions
run (an open inbox tab: the event feed follows every change, SQLite's change watcher runs), and a
batch ends once the stream has had every decision's event. The ratios are taken round by round
(this / baseline), so both sides of a ratio met the same load. Writes
bench/results/server_versus.json (server_versus_stream.json with `--stream`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from core import git_commit, machine_info, progress
from server_throughput import Batch, throughput_batches

RESULTS_PATH = Path(__file__).resolve().parent / "results" / "server_versus.json"
STREAM_RESULTS_PATH = RESULTS_PATH.with_name("server_versus_stream.json")


def commit_of(checkout: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def summary(values: list[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def row(batch: Batch) -> dict[str, Any]:
    return {
        "decisions_per_second": batch.per_second,
        "server_cpu_ms": batch.cpu_ms,
        "decisions_per_core_second": batch.per_core_second,
        "client_cpu_ms": batch.client_cpu_ms,
        "server_threads_cpu_ms": batch.thread_cpu_ms(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline", type=Path, required=True, help="another checkout of signoff")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--decisions", type=int, default=2000)
    parser.add_argument(
        "--stream", action="store_true", help="keep one admin's SSE stream open while the decisions run"
    )
    parser.add_argument("--output", type=Path, default=None)
    options = parser.parse_args(argv)
    output: Path = options.output or (STREAM_RESULTS_PATH if options.stream else RESULTS_PATH)
    baseline = options.baseline.resolve()
    baseline_env = {**os.environ, "PYTHONPATH": str(baseline / "src")}
    load_at_start = os.getloadavg()
    rounds: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="signoff-bench-versus-") as tmp:
        for number in range(options.rounds):
            sides = [("this", None, None), ("baseline", baseline_env, baseline)]
            if number % 2:  # each side goes first in half the rounds
                sides.reverse()
            measured: dict[str, Any] = {"load": os.getloadavg()[0]}
            for side, env, cwd in sides:
                progress(f"round {number + 1}/{options.rounds}: {side}")
                decided, asked = throughput_batches(
                    Path(tmp), f"{side}{number}", options.decisions, env=env, cwd=cwd, stream=options.stream
                )
                measured[side] = {**row(decided), "asks_server_cpu_ms": asked.cpu_ms}
            measured["cpu_ratio"] = measured["baseline"]["server_cpu_ms"] / measured["this"]["server_cpu_ms"]
            measured["wall_ratio"] = (
                measured["this"]["decisions_per_second"] / measured["baseline"]["decisions_per_second"]
            )
            rounds.append(measured)
            print(json.dumps(measured), flush=True)
    results = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "this": git_commit(),
        "baseline": commit_of(baseline),
        "decisions_per_round": options.decisions,
        "admin_stream_open": options.stream,
        "load_average_at_start": load_at_start,
        "machine": machine_info(None),
        "rounds": rounds,
        "summary": {
            side: {
                key: summary([measured[side][key] for measured in rounds])
                for key in (
                    "decisions_per_second",
                    "server_cpu_ms",
                    "decisions_per_core_second",
                    "client_cpu_ms",
                )
            }
            | {
                f"thread {name} cpu_ms": summary(
                    [measured[side]["server_threads_cpu_ms"].get(name, 0.0) for measured in rounds]
                )
                for name in sorted(
                    {name for measured in rounds for name in measured[side]["server_threads_cpu_ms"]}
                )
            }
            for side in ("this", "baseline")
        },
        "cpu_ratio_baseline_over_this": summary([measured["cpu_ratio"] for measured in rounds]),
        "wall_ratio_this_over_baseline": summary([measured["wall_ratio"] for measured in rounds]),
    }
    output.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps({key: results[key] for key in ("summary", "cpu_ratio_baseline_over_this")}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
