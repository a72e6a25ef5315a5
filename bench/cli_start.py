"""CLI start-up benchmark: the CPU a command costs, over a bare Python and over a bare Typer app.

    .venv/bin/python bench/cli_start.py [--quick]

Prints one table and writes bench/results/cli_start.json. Each contender is a new process, run
in interleaved rounds (every contender once per round, `python -c pass` among them), so that a
change in the machine's load hits all of them alike; its CPU is the child's user + system time
(getrusage(RUSAGE_CHILDREN)), not the wall clock. Min, median and max over the rounds.

The contenders: `python -c pass`; `import typer`; a bare Typer app (a root callback with four
options and a command with seven, as `signoff pending` has: the floor of any Typer CLI, since
Typer builds a pydantic TypeAdapter per parameter when it parses it); `signoff --version`; a
local `signoff pending` (three open requests in a SQLite file); `signoff approve ID` (a fresh
request each round, in a second file); `signoff explain TOOL` (the stored rules); and `signoff
serve --help` (which loads the server). A first run of each writes the bytecode its modules
lack (PYTHONDONTWRITEBYTECODE is dropped from the children's environment: without .pyc files
every start compiles every module and the figures double).

Issue 19's target: `signoff --version` and a local `signoff pending` within 0.15 s of CPU over
`python -c pass`.
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
from collections.abc import Callable
from pathlib import Path

from machine import machine_info
from metrics import Metric, Report, Target
from output import print_report, progress, write_results
from signoff import Gate, Pending, RuleSet, Scope, ToolCall, open_store

RESULTS_PATH = Path(__file__).resolve().parent / "results" / "cli_start.json"
TARGET_SECONDS = 0.15
SIGNOFF = [sys.executable, "-m", "signoff.cli"]
ASKING = RuleSet.from_dict({"tools": {"send_email": {"requires_approval": True}}})
OPEN_REQUESTS = 3
BARE_TYPER_APP = """
import sys
from typing import Annotated
import typer

app = typer.Typer()

@app.callback()
def root(
    db: Annotated[str | None, typer.Option()] = None,
    url: Annotated[str | None, typer.Option()] = None,
    token: Annotated[str | None, typer.Option()] = None,
    version: Annotated[bool, typer.Option("--version")] = False,
) -> None:
    pass

@app.command()
def pending(
    tool: Annotated[str | None, typer.Option()] = None,
    agent: Annotated[str | None, typer.Option()] = None,
    app_name: Annotated[str | None, typer.Option("--app")] = None,
    thread: Annotated[str | None, typer.Option()] = None,
    as_user: Annotated[str | None, typer.Option("--as")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 50,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    print("No open requests.")

sys.argv = ["bare", "pending"]
app()
"""
"""What every Typer CLI pays: Typer's import and its coercion of `signoff pending`'s parameters."""


TARGETED = ("signoff --version", "signoff pending (local)")
OTHERS = ("signoff approve ID (local)", "signoff explain TOOL (local)")


def per_round(
    values: list[float], bases: list[float], compare: Callable[[float, float], float]
) -> tuple[float, dict[str, float]]:
    """The median of `compare(value, base)` over the rounds (each round's pair measured side by
    side), and its min and max."""
    compared = [compare(value, base) for value, base in zip(values, bases, strict=True)]
    return statistics.median(compared), {"min": min(compared), "max": max(compared), "rounds": len(compared)}


def cpu_of(command: list[str], env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def submit(url: str, count: int, thread: str) -> list[str]:
    """`count` open requests in the database at `url`; their ids."""
    store = open_store(url)
    try:
        gate = Gate(store, rules=ASKING)
        ids = []
        for index in range(count):
            call = ToolCall(name="send_email", args={"to": "bob@example.com", "n": index}, id=f"call-{index}")
            found = gate.submit(call, Scope(thread_id=thread, agent="bench"))
            assert isinstance(found, Pending), found
            ids.append(found.request.id)
        return ids
    finally:
        store.close()


def contenders(listed: str) -> dict[str, list[str] | None]:
    """Each contender's command; None for the one that takes a new request id each round."""
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "import typer": [sys.executable, "-c", "import typer"],
        "a bare Typer app": [sys.executable, "-c", BARE_TYPER_APP],
        "signoff --version": [*SIGNOFF, "--version"],
        "signoff pending (local)": [*SIGNOFF, "--db", listed, "pending"],
        "signoff approve ID (local)": None,
        "signoff explain TOOL (local)": [*SIGNOFF, "--db", listed, "explain", "send_email"],
        "signoff serve --help": [*SIGNOFF, "serve", "--help"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer rounds: a smoke check")
    parser.add_argument("--output", type=Path, default=RESULTS_PATH)
    options = parser.parse_args(argv)
    rounds = 3 if options.quick else 15
    started = time.monotonic()
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    for name in ("SIGNOFF_URL", "SIGNOFF_TOKEN", "SIGNOFF_DB"):
        env.pop(name, None)
    with tempfile.TemporaryDirectory(prefix="signoff-bench-cli-") as tmp:
        listed = f"sqlite:///{Path(tmp) / 'listed.db'}"
        approving = f"sqlite:///{Path(tmp) / 'approving.db'}"
        submit(listed, OPEN_REQUESTS, "listed")
        to_approve = submit(approving, rounds + 1, "approving")
        commands = contenders(listed)

        def command_of(name: str) -> list[str]:
            command = commands[name]
            if command is None:
                return [*SIGNOFF, "--db", approving, "approve", to_approve.pop(), "--as", "alice"]
            return command

        for name in commands:  # writes the bytecode of every module each one loads
            cpu_of(command_of(name), env)
        seconds: dict[str, list[float]] = {name: [] for name in commands}
        for round_number in range(rounds):
            progress(f"round {round_number + 1}/{rounds}")
            for name in commands:
                seconds[name].append(cpu_of(command_of(name), env))
    report = Report()
    for name, values in seconds.items():
        median = statistics.median(values)
        details = {"min_s": min(values), "max_s": max(values), "rounds": len(values)}
        report.add(Metric("CPU of a new process", name, f"{name} (median)", median, "s", None, details))
    for name in ("a bare Typer app", "signoff --version", "signoff pending (local)", *OTHERS):
        target = Target("<=", TARGET_SECONDS) if name in TARGETED else None
        over, spread = per_round(seconds[name], seconds["python -c pass"], lambda value, bare: value - bare)
        label = f"{name} − python -c pass"
        report.add(Metric("Over a bare Python", f"{name} over bare", label, over, "s", target, spread))
    for name in ("signoff pending (local)", *OTHERS):
        ratio, spread = per_round(
            seconds[name], seconds["a bare Typer app"], lambda value, floor: value / floor
        )
        label = f"{name} / a bare Typer app"
        report.add(Metric("Against the Typer floor", f"{name} vs typer", label, ratio, "x", None, spread))
    report.notes.append(
        f"{rounds} interleaved rounds; user + system CPU of each child (getrusage); differences and "
        "ratios are taken round by round (median, min and max in the JSON)."
    )
    report.notes.append(f"Load average at the end: {', '.join(f'{load:.2f}' for load in os.getloadavg())}.")
    report.notes.append(f"Finished in {time.monotonic() - started:.0f} s; results in {options.output}.")
    print_report(report, f"signoff CLI start-up ({'quick' if options.quick else 'full'} run)")
    write_results(report, machine_info(None), options.quick, options.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
