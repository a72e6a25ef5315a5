"""Adapter benchmarks: a call that needs no approval, through each framework's own HITL hook and
through signoff's adapter for the same call; and a decided call's wake-up through each adapter.

    .venv/bin/python bench/adapters.py [--quick]

Prints one table (measurement, value, target, met) and writes bench/results/adapters.json.

1. Hook cost (issue 9: "costs no more than the framework's own HITL hook for the same call"):
   one ungated call (`search`; the rules, kept in a SQLite store, gate only `send_email`),
   the framework's hook and signoff's run in turns (A B, B A, ...) in the same loop, medians
   of the per-call time over the rounds, and their ratio within the run:
   - LangChain: `HumanInTheLoopMiddleware.after_model` / `wrap_tool_call` against
     `SignoffMiddleware`'s (durable, and `wait=True`), on a state whose last AIMessage has the
     one call; run inside a runnable config carrying the thread_id, as in a graph. `wait=True`
     asks in `wrap_tool_call`, as the stock `interrupt_mode="per_call"` does: compared with both.
   - Haystack: `BlockingConfirmationStrategy(NeverAskPolicy(), ...).run` against
     `SignoffConfirmationStrategy.run` (what `ConfirmationHook` calls per tool call).
   - Pydantic AI: `approval_required(predicate)`'s `call_tool` against `signoff_approval`'s, both
     wrapping a toolset whose `call_tool` returns at once.
   - OpenAI Agents: the SDK's `evaluate_function_tool_approval` for a tool with
     `needs_approval=False`, with a `needs_approval` function that says no (the SDK's own
     conditional approval), and with signoff's gated tool, inside a `SignoffApproval.run` (its
     scope bound: the tool reads `needs_approval=False` there) and under `Runner.run` directly
     (signoff's predicate, asked per call).
   - Claude Agent SDK (bench/adapters_claude.py): one control request through the SDK's handler,
     an allow-all `can_use_tool` and a no-opinion PreToolUse hook against signoff's.
   - Agent Framework: `SignoffApprovals`' function middleware in a `FunctionMiddlewarePipeline`
     against no middleware (`tool.invoke`, what the loop calls then) and against a pass-through
     `FunctionMiddleware` in the same pipeline; the context built per call, as the loop does.
2. The gate's own cost for the same call: `gate.review`, `gate.submit`, `gate.explain`.
3. Wake-up: a request is made, a waiter blocks in the adapter's waiting mode (or in
   `gate.review` / `gate.areview`), another thread decides; the time from `decide()` returning
   (committed) to the waiter returning, on CLOCK_MONOTONIC. The modes run in turns, the p50
   of each is compared with the gate's own (sync adapters with `review`, async with `areview`).
   Modes that run the tool themselves (`gate.run`, the LangChain adapter: the execution's claim
   is committed before the tool starts) are also timed to the tool starting, the moment the
   agent resumes; their return comes after the result is recorded as well.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from adapters_claude import measure_claude_hooks
from adapters_common import (
    FULL,
    QUICK,
    RULES,
    SEARCH_ARGS,
    THREAD,
    Side,
    Sizes,
    check,
    installed,
    interleaved,
    report_pair,
    sync_ns,
)
from adapters_crewai import crewai_hooks
from adapters_hooks import (
    agent_framework_hooks,
    google_adk_hooks,
    haystack_hooks,
    langchain_hooks,
    openai_agents_hooks,
    pydantic_ai_hooks,
)
from adapters_wakeups import measure_wakeups
from git_ref import ROOT, extract
from machine import machine_info
from metrics import Metric, Report
from output import print_report, progress, write_results
from signoff import Gate, RuleSet, Scope, ToolCall
from signoff.store import SQLiteStore

RESULTS_PATH = Path(__file__).resolve().parent / "results" / "adapters.json"


# -- 1. hooks and 2. the gate -----------------------------------------------------------------


def measure_hooks(report: Report, gate: Gate, sizes: Sizes) -> None:
    loop = asyncio.new_event_loop()
    try:
        progress("hooks: LangChain")
        sides, restore = langchain_hooks(gate)
        try:
            runs = interleaved(sides, sizes)
        finally:
            restore()
        labels = [side.label for side in sides]
        report_pair(
            report, "langchain_after_model", "LangChain hook, no approval", runs, labels[0], [labels[1]]
        )
        report_pair(
            report, "langchain_wrap_tool_call", "LangChain hook, no approval", runs, labels[2], labels[3:5]
        )
        # wait=True asks in the tools node, where the stock middleware's per_call mode asks
        report_pair(report, "langchain_per_call", "LangChain hook, no approval", runs, labels[5], [labels[4]])
        progress("hooks: Haystack")
        sides = haystack_hooks(gate)
        runs = interleaved(sides, sizes)
        report_pair(
            report, "haystack_strategy", "Haystack hook, no approval", runs, sides[0].label, [sides[1].label]
        )
        progress("hooks: Pydantic AI")
        sides = pydantic_ai_hooks(gate, loop)
        runs = interleaved(sides, sizes)
        report_pair(
            report,
            "pydantic_ai_toolset",
            "Pydantic AI hook, no approval",
            runs,
            sides[0].label,
            [sides[1].label],
        )
        progress("hooks: OpenAI Agents")
        sides = openai_agents_hooks(gate, loop)
        runs = interleaved(sides, sizes)
        section = "OpenAI Agents hook, no approval"
        report_pair(
            report, "openai_agents_bool", section, runs, sides[0].label, [sides[2].label, sides[3].label]
        )
        report_pair(
            report, "openai_agents_function", section, runs, sides[1].label, [sides[2].label, sides[3].label]
        )
        progress("hooks: Agent Framework")
        sides = agent_framework_hooks(gate, loop)
        runs = interleaved(sides, sizes)
        section = "Agent Framework hook, no approval"
        report_pair(report, "agent_framework_bare", section, runs, sides[0].label, [sides[2].label])
        report_pair(report, "agent_framework_passthrough", section, runs, sides[1].label, [sides[2].label])
        progress("hooks: Google ADK")
        sides = google_adk_hooks(gate, loop)
        runs = interleaved(sides, sizes)
        section = "Google ADK hook, no approval"
        report_pair(report, "google_adk_bare", section, runs, sides[0].label, [sides[2].label])
        report_pair(report, "google_adk_passthrough", section, runs, sides[1].label, [sides[2].label])
        measure_claude_hooks(report, gate, sizes)
    finally:
        loop.close()


def measure_gate(report: Report, gate: Gate, sizes: Sizes) -> None:
    progress("gate: review, submit, explain")
    call = ToolCall(name="search", args=SEARCH_ARGS, id="gate-1")
    scope = Scope(thread_id=THREAD, agent="bench-agent")
    check(gate.review(call, scope).execute, "review lets search through")
    sides = [
        Side("gate.review", lambda n: sync_ns(lambda: gate.review(call, scope), n)),
        Side("gate.submit", lambda n: sync_ns(lambda: gate.submit(call, scope), n)),
        Side(
            "gate.explain",
            lambda n: sync_ns(lambda: gate.explain("search", agent="bench-agent", args=SEARCH_ARGS), n),
        ),
    ]
    runs = interleaved(sides, sizes)
    for side in sides:
        name = side.label.replace("gate.", "gate_")
        value = statistics.median(runs[side.label])
        report.add(
            Metric(
                "Gate, no approval",
                name,
                f"{side.label} (median)",
                value,
                "ns",
                details={"rounds": runs[side.label]},
            )
        )


# -- main -------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer iterations: a smoke check")
    parser.add_argument("--output", type=Path, default=RESULTS_PATH, help="where to write the JSON results")
    parser.add_argument("--only", choices=PARTS, action="append", help="measure only this part (repeatable)")
    parser.add_argument(
        "--compare",
        metavar="REF",
        help="hooks and gate only: this git ref's code against the work tree's, in alternating "
        "child processes (one round each), medians per code and their ratio",
    )
    parser.add_argument("--role", choices=["round"], help=argparse.SUPPRESS)
    return parser.parse_args(argv)


PARTS = ("hooks", "gate", "wakeups", "crewai")
"""`crewai`: CrewAI's hook cost, measured where CrewAI is installed (the second venv:
`.venv-compat/bin/python bench/adapters.py --only crewai --output bench/results/adapters_crewai.json`)."""


def measure(parts: set[str], sizes: Sizes, workdir: Path) -> Report:
    report = Report()
    store = SQLiteStore(workdir / "adapters.db")
    try:
        store.replace_rules(RuleSet.from_dict(RULES), actor="bench", channel="bench")
        gate = Gate(store)
        if "hooks" in parts:
            measure_hooks(report, gate, sizes)
        if "gate" in parts:
            measure_gate(report, gate, sizes)
        if "wakeups" in parts:
            measure_wakeups(report, gate, sizes)
        if "crewai" in parts and installed("crewai"):
            progress("hooks: CrewAI")
            sides = crewai_hooks(gate)
            runs = interleaved(sides, sizes)
            section = "CrewAI hook, no approval (thread CPU time)"
            report_pair(report, "crewai_hook", section, runs, sides[3].label, [sides[4].label])
            # through CrewAI's dispatch, whose telemetry event (emitted once per dispatch to any
            # hook: ~20 µs, to a thread pool) dominates and varies with the pool's backlog
            report_pair(report, "crewai_dispatched", section, runs, sides[1].label, [sides[2].label])
            report_pair(report, "crewai_bare", section, runs, sides[0].label, [sides[2].label])
    finally:
        store.close()
    return report


def round_role(sizes: Sizes) -> int:
    """A child of `--compare`: one round of the hooks and the gate; their values as JSON on stdout."""
    with tempfile.TemporaryDirectory(prefix="signoff-bench-adapters-") as workdir:
        report = measure({"hooks", "gate"}, replace(sizes, rounds=1), Path(workdir))
    print(json.dumps([metric.to_dict() for metric in report.metrics]))
    return 0


def compare(ref: str, sizes: Sizes, workdir: Path) -> Report:
    """Rounds alternating the two codes (A B, B A, ...), each in a fresh child process."""
    (workdir / "compare").mkdir()
    codes = {"now": ROOT / "src", ref: extract(ref, workdir / "compare").src}
    runs: dict[str, dict[str, list[float]]] = {label: {} for label in codes}
    shapes: dict[str, dict[str, Any]] = {}
    labels = list(codes)
    for number in range(sizes.rounds):
        for label in labels if number % 2 == 0 else reversed(labels):
            progress(f"compare: round {number + 1}/{sizes.rounds}, {label}")
            command = [sys.executable, str(Path(__file__).resolve()), "--role", "round"]
            if sizes is QUICK:
                command.append("--quick")
            env = {**os.environ, "PYTHONPATH": str(codes[label])}
            done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
            for metric in json.loads(done.stdout):
                shapes.setdefault(metric["name"], metric)
                runs[label].setdefault(metric["name"], []).append(metric["value"])
    report = Report()
    for name, shape in shapes.items():
        if name not in runs[ref]:
            continue
        before = statistics.median(runs[ref][name])
        after = statistics.median(runs["now"][name])
        section = shape["section"]
        report.add(Metric(section, f"{name}_before", f"{shape['label']} ({ref})", before, shape["unit"]))
        report.add(Metric(section, f"{name}_after", f"{shape['label']} (now)", after, shape["unit"]))
        if shape["unit"] == "ns":
            report.add(Metric(section, f"{name}_after_over_before", "now / before", after / before, "x"))
    return report


def main(argv: list[str] | None = None) -> int:
    options = parse_args(argv)
    sizes = QUICK if options.quick else FULL
    if options.role == "round":
        return round_role(sizes)
    parts = set(options.only or PARTS)
    machine = machine_info(None)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="signoff-bench-adapters-") as workdir:
        if options.compare:
            report = compare(options.compare, sizes, Path(workdir))
        else:
            report = measure(parts, sizes, Path(workdir))
    report.notes.append(
        f"Hooks: {sizes.rounds} interleaved rounds of {sizes.calls} calls per side, medians; rules kept in "
        "the store (the gate re-reads their version at most once a second). Ratios compare sides of "
        "one run."
    )
    if "wakeups" in parts and not options.compare:
        report.notes.append(
            f"Wake-up: {sizes.wakeups} requests per mode ({sizes.wakeup_warmups} warm-ups dropped), modes "
            "in turns; from decide() returning (committed) to the waiting mode returning."
        )
    report.notes.append(f"Finished in {time.monotonic() - started:.0f} s; results in {options.output}.")
    mode = "quick" if options.quick else "full"
    print_report(report, f"signoff adapter benchmarks ({mode} run, {machine['cpu_count']} cores)")
    write_results(report, machine, options.quick, options.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
