"""What the adapter benchmarks share (bench/adapters.py and the modules it runs, bench/peers_fastpath.py,
bench/strands_hook.py): the rules and calls they use, their sizes, timing a side's calls, running
the sides in turns and reporting each of signoff's sides against the framework's own."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from metrics import Metric, Report, Target

RULES = {"tools": {"send_email": {"requires_approval": True}, "search": {"requires_approval": False}}}
THREAD = "bench-adapters"
SEARCH_ARGS = {"query": "weather in Paris"}
EMAIL_ARGS = {"to": "bob@example.com", "subject": "Quarterly report", "body": "Numbers attached."}
HOOK_RATIO_TARGET = 1.0
"""signoff's hook / the framework's own, for a call that needs no approval."""


@dataclass(frozen=True)
class Sizes:
    calls: int
    rounds: int
    wakeups: int
    wakeup_warmups: int


FULL = Sizes(calls=20_000, rounds=15, wakeups=150, wakeup_warmups=10)
QUICK = Sizes(calls=5_000, rounds=5, wakeups=30, wakeup_warmups=3)

Hook = Callable[[], object]
AsyncHook = Callable[[], Awaitable[object]]
Clock = Callable[[], int]
"""ns; the wall clock here, the thread's CPU clock in `python -m bench` (bench/peers_fastpath.py)."""


def sync_ns(hook: Hook, calls: int, clock: Clock = time.perf_counter_ns) -> float:
    start = clock()
    for _ in range(calls):
        hook()
    return (clock() - start) / calls


def async_ns(
    hook: AsyncHook, calls: int, loop: asyncio.AbstractEventLoop, clock: Clock = time.perf_counter_ns
) -> float:
    async def many() -> float:
        start = clock()
        for _ in range(calls):
            await hook()
        return (clock() - start) / calls

    return loop.run_until_complete(many())


@dataclass(frozen=True)
class Side:
    label: str
    measure: Callable[[int], float]
    """ns per call over that many calls."""


def interleaved(sides: list[Side], sizes: Sizes) -> dict[str, list[float]]:
    """Every side once per round, the order reversed every other round, after a warm-up."""
    for side in sides:
        side.measure(max(sizes.calls // 10, 100))
    runs: dict[str, list[float]] = {side.label: [] for side in sides}
    for number in range(sizes.rounds):
        for side in sides if number % 2 == 0 else reversed(sides):
            runs[side.label].append(side.measure(sizes.calls))
    return runs


def report_pair(
    report: Report, key: str, section: str, runs: dict[str, list[float]], framework: str, signoff: list[str]
) -> None:
    """The framework's hook, signoff's, and the ratio of each signoff side to it."""
    own = statistics.median(runs[framework])
    report.add(Metric(section, f"{key}_framework", framework, own, "ns", details={"rounds": runs[framework]}))
    for number, label in enumerate(signoff):
        ours = statistics.median(runs[label])
        suffix = "" if number == 0 else f"_{number + 1}"
        report.add(
            Metric(section, f"{key}_signoff{suffix}", label, ours, "ns", details={"rounds": runs[label]})
        )
        report.add(
            Metric(
                section,
                f"{key}_ratio{suffix}",
                f"{label} / framework's",
                ours / own,
                "x",
                Target("<=", HOOK_RATIO_TARGET),
            )
        )


def check(condition: bool, what: str) -> None:
    if not condition:
        raise RuntimeError(f"benchmark setup is wrong: {what}")


def installed(module: str) -> bool:
    """Whether a framework is installed here (CrewAI lives in the second venv, .venv-compat)."""
    import importlib.util

    return importlib.util.find_spec(module) is not None
