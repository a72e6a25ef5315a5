"""CLI start-up benchmark: the CPU a command costs before it does anything, over a bare Python.

    .venv/bin/python bench/cli_start.py [--quick]

Prints one table and writes bench/results/cli_start.json. Each contender is a new process
(`python -c pass`, `signoff --version`, a local `signoff pending` on an empty SQLite file,
`signoff serve --help`), run in interleaved rounds; its CPU is user + system time of the child
(getrusage), not the wall clock, so another process on the machine does not count. Issue 19's
target: `signoff --version` and `signoff pending` within 0.15 s of CPU over `python -c pass`.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from core import Metric, Report, Target, machine_info, print_report, progress, write_results

RESULTS_PATH = Path(__file__).resolve().parent / "results" / "cli_start.json"
TARGET_SECONDS = 0.15
SIGNOFF = [sys.executable, "-m", "signoff.cli"]


def cpu_of(command: list[str], env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer rounds: a smoke check")
    parser.add_argument("--output", type=Path, default=RESULTS_PATH)
    options = parser.parse_args(argv)
    rounds = 3 if options.quick else 15
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="signoff-bench-cli-") as tmp:
        env = {**os.environ, "SIGNOFF_DB": f"sqlite:///{Path(tmp) / 'signoff.db'}"}
        env.pop("SIGNOFF_URL", None)
        contenders = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "signoff --version": [*SIGNOFF, "--version"],
            "signoff pending (local)": [*SIGNOFF, "pending"],
            "signoff serve --help": [*SIGNOFF, "serve", "--help"],
        }
        cpu_of(contenders["signoff pending (local)"], env)  # creates the database; warms the disk cache
        seconds: dict[str, list[float]] = {name: [] for name in contenders}
        for round_number in range(rounds):
            progress(f"round {round_number + 1}/{rounds}")
            for name, command in contenders.items():
                seconds[name].append(cpu_of(command, env))
    bare = statistics.median(seconds["python -c pass"])
    report = Report()
    for name, values in seconds.items():
        median = statistics.median(values)
        details = {"min_s": min(values), "max_s": max(values), "rounds": len(values)}
        report.add(Metric("CPU of a new process", name, f"{name} (median)", median, "s", None, details))
    for name in ("signoff --version", "signoff pending (local)"):
        over = statistics.median(seconds[name]) - bare
        target = Target("<=", TARGET_SECONDS)
        label = f"{name} − python -c pass"
        report.add(Metric("CPU over a bare Python", f"{name} over bare", label, over, "s", target))
    report.notes.append(f"{rounds} interleaved rounds; user + system CPU of each child (getrusage).")
    report.notes.append(f"Finished in {time.monotonic() - started:.0f} s; results in {options.output}.")
    print_report(report, f"signoff CLI start-up ({'quick' if options.quick else 'full'} run)")
    write_results(report, machine_info(None), options.quick, options.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
