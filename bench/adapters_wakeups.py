"""Section 3 of bench/adapters.py: a decided call's wake-up through each adapter's waiting mode,
against the gate's own (`gate.review`, `gate.areview`, `gate.run`)."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from adapters_common import EMAIL_ARGS, THREAD, Sizes, check
from core import Metric, Report, Target, percentile, progress, wait_until_watched
from signoff import Approve, Gate, Pending, Scope, ToolCall
from signoff.store import Store

WAKEUP_EXTRA_P50_TARGET_MS = 1.0
"""An adapter's wake-up p50 minus the gate's own."""
RESUME_TIMEOUT = 30.0

Waiter = Callable[[ToolCall], object]
"""Blocks in a waiting mode until the call's request is decided; returns what the mode returns."""

TOOL_STARTED: list[int] = []
"""When a mode that runs the tool (`gate.run`, the LangChain adapter) entered it, on
CLOCK_MONOTONIC: the agent's resumption as its user sees it, before the result is recorded."""


def tool_started() -> None:
    TOOL_STARTED.append(time.monotonic_ns())


def sync_waiters(gate: Gate) -> dict[str, Waiter]:
    from langchain.agents.middleware.types import ToolCallRequest
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import tool
    from langgraph.prebuilt.tool_node import ToolRuntime

    from signoff.integrations.haystack import SignoffConfirmationStrategy
    from signoff.integrations.langchain import SignoffMiddleware

    @tool
    def send_email(to: str, subject: str, body: str) -> str:
        """Send an email."""
        return "sent"

    config: Any = {"configurable": {"thread_id": THREAD}}
    middleware = SignoffMiddleware(gate=gate, wait=True)
    strategy = SignoffConfirmationStrategy(gate)
    scope = Scope(thread_id=THREAD)

    def langchain(call: ToolCall) -> object:
        lc_call: Any = {"name": call.name, "args": call.args, "id": call.id, "type": "tool_call"}
        state: Any = {"messages": []}
        runtime: Any = ToolRuntime(
            state=state,
            context=None,
            config=config,
            stream_writer=lambda _: None,
            tool_call_id=call.id,
            store=None,
        )
        request = ToolCallRequest(tool_call=lc_call, tool=send_email, state=state, runtime=runtime)

        def send(_: object) -> ToolMessage:
            tool_started()
            return ToolMessage("sent", tool_call_id=str(call.id))

        return middleware.wrap_tool_call(request, send)

    def haystack(call: ToolCall) -> object:
        return strategy.run(
            tool_name=call.name,
            tool_description="Send an email.",
            tool_params=call.args,
            tool_call_id=call.id,
            confirmation_strategy_context={"signoff": {"thread_id": THREAD}},
        )

    def sent(**args: object) -> str:
        tool_started()
        return "sent"

    def run(call: ToolCall) -> object:
        return gate.run(call, sent, scope, timeout=RESUME_TIMEOUT)

    return {
        "gate.review": lambda call: gate.review(call, scope, timeout=RESUME_TIMEOUT),
        "gate.run": run,
        "LangChain wrap_tool_call (wait=True)": langchain,
        "Haystack SignoffConfirmationStrategy.run": haystack,
    }


def async_waiters(gate: Gate) -> dict[str, Callable[[ToolCall], Awaitable[object]]]:
    from agents import Agent, function_tool
    from agents.items import ToolApprovalItem
    from openai.types.responses import ResponseFunctionToolCall
    from pydantic_ai import RunContext, ToolCallPart
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.tools import DeferredToolRequests
    from pydantic_ai.usage import RunUsage

    from signoff.integrations.openai_agents import SignoffApproval
    from signoff.integrations.openai_agents.interruptions import submit_all
    from signoff.integrations.pydantic_ai import SignoffApprovals

    scope = Scope(thread_id=THREAD)
    capability = SignoffApprovals(gate=gate, wait=True)
    approval = SignoffApproval(gate)

    def send_email(to: str, subject: str, body: str) -> str:
        """Send an email."""
        return "sent"

    agent: Any = Agent(name="mail", tools=[approval.gate_tool(function_tool(send_email))])

    async def pydantic_ai(call: ToolCall) -> object:
        ctx: Any = RunContext(deps=None, model=TestModel(), usage=RunUsage(), conversation_id=THREAD)
        part = ToolCallPart(call.name, call.args, tool_call_id=str(call.id))
        return await capability.handle_deferred_tool_calls(
            ctx, requests=DeferredToolRequests(approvals=[part])
        )

    async def openai_agents(call: ToolCall) -> object:
        raw = ResponseFunctionToolCall(
            arguments=json.dumps(call.args), call_id=str(call.id), name=call.name, type="function_call"
        )
        item = ToolApprovalItem(agent=agent, raw_item=raw, tool_name=call.name)
        return await submit_all(gate, agent, [item], scope, wait=True)

    return {
        "gate.areview": lambda call: gate.areview(call, scope, timeout=RESUME_TIMEOUT),
        "Pydantic AI SignoffApprovals(wait=True)": pydantic_ai,
        "OpenAI Agents submit_all(wait=True)": openai_agents,
    }


def one_wakeup(gate: Gate, waiter: Waiter, call: ToolCall) -> tuple[float, float | None]:
    """ms from decide() returning to the waiter returning, and to the tool starting (for the
    modes that run it)."""
    TOOL_STARTED.clear()
    pending = gate.submit(call, Scope(thread_id=THREAD))
    check(isinstance(pending, Pending), "send_email asks")
    assert isinstance(pending, Pending)
    resumed: list[int] = []

    def wait() -> None:
        waiter(call)
        resumed.append(time.monotonic_ns())

    thread = threading.Thread(target=wait, name="bench-adapter-waiter", daemon=True)
    thread.start()
    store: Store = gate.store  # type: ignore[assignment]
    wait_until_watched(store, pending.request_id)
    time.sleep(0.002)
    store.decide(pending.request_id, Approve(), actor="alice", channel="bench")
    decided = time.monotonic_ns()
    thread.join(RESUME_TIMEOUT)
    check(bool(resumed), f"the waiter resumed after {pending.request_id} was decided")
    started = (TOOL_STARTED[0] - decided) / 1e6 if TOOL_STARTED else None
    return (resumed[0] - decided) / 1e6, started


STARTED = " (tool started)"
"""The suffix of a mode's label for its wake-up measured to the tool starting."""

WAKEUP_BASELINES = {
    "LangChain wrap_tool_call (wait=True)" + STARTED: ("gate.review", "gate.run" + STARTED),
    "LangChain wrap_tool_call (wait=True)": ("gate.run",),
    "Haystack SignoffConfirmationStrategy.run": ("gate.review",),
    "Pydantic AI SignoffApprovals(wait=True)": ("gate.areview",),
    "OpenAI Agents submit_all(wait=True)": ("gate.areview",),
}
"""The gate's own waiting call each adapter's wake-up is compared with. The LangChain adapter runs
the tool exactly once (`gate.run`: its claim is committed before the tool starts, its result
recorded after), so its resumption is the tool starting: compared with `gate.review` returning
and with `gate.run`'s tool starting; to the adapter returning (the result recorded too) it is
compared with `gate.run` returning."""


def on_loop(loop: asyncio.AbstractEventLoop, coroutine: Callable[[ToolCall], Awaitable[object]]) -> Waiter:
    """A waiter running `coroutine` on `loop` (one loop for the whole run, as in an app)."""

    def wait(call: ToolCall) -> object:
        return asyncio.run_coroutine_threadsafe(coroutine(call), loop).result(RESUME_TIMEOUT)  # type: ignore[arg-type]

    return wait


def measure_wakeups(report: Report, gate: Gate, sizes: Sizes) -> None:
    progress("wake-ups through each adapter")
    loop = asyncio.new_event_loop()
    runner = threading.Thread(target=loop.run_forever, name="bench-adapter-loop", daemon=True)
    runner.start()
    try:
        waiters: dict[str, Waiter] = dict(sync_waiters(gate))
        waiters.update({label: on_loop(loop, coroutine) for label, coroutine in async_waiters(gate).items()})
        samples = wakeup_samples(gate, waiters, sizes)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        runner.join(10)
        loop.close()
    report_wakeups(report, samples)


FSYNC = "fdatasync of a 4 KiB page rewritten beside the store"
"""The disk's durable-write floor, sampled once per round between the wake-ups: what a claim's
commit (SQLite, synchronous=FULL) cannot go below."""
CLAIM_GAP = "LangChain wrap_tool_call (wait=True)" + STARTED


def fsync_probe(directory: Path, page: int) -> float:
    """ms to make one rewritten 4 KiB page durable (a WAL frame rewritten after a checkpoint)."""
    descriptor = os.open(directory / "fsync-probe", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        os.pwrite(descriptor, os.urandom(4096), (page % 16) * 4096)
        begun = time.monotonic_ns()
        os.fdatasync(descriptor)
        return (time.monotonic_ns() - begun) / 1e6
    finally:
        os.close(descriptor)


COMMIT = "raw sqlite3: commit of a one-row UPDATE (WAL, synchronous=FULL) beside the store"
"""The smallest durable SQLite commit on this disk (its WAL frame and fsync), sampled likewise."""


def open_commit_probe(directory: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(directory / "commit-probe.db", isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = FULL")
    connection.execute("CREATE TABLE IF NOT EXISTS probe (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")
    connection.execute("INSERT OR IGNORE INTO probe VALUES (1, 0)")
    return connection


def commit_probe(connection: sqlite3.Connection) -> float:
    """ms for one durable commit of a one-row UPDATE."""
    begun = time.monotonic_ns()
    connection.execute("BEGIN IMMEDIATE")
    connection.execute("UPDATE probe SET n = n + 1 WHERE id = 1")
    connection.execute("COMMIT")
    return (time.monotonic_ns() - begun) / 1e6


def wakeup_samples(gate: Gate, waiters: dict[str, Waiter], sizes: Sizes) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {label: [] for label in waiters}
    labels = list(waiters)
    directory = Path(gate.store.path).parent  # type: ignore[attr-defined]
    probe = open_commit_probe(directory)
    for number in range(sizes.wakeup_warmups + sizes.wakeups):
        for label in labels if number % 2 == 0 else reversed(labels):
            call = ToolCall(name="send_email", args=EMAIL_ARGS, id=f"wake-{number}-{labels.index(label)}")
            latency, started = one_wakeup(gate, waiters[label], call)
            if number >= sizes.wakeup_warmups:
                samples[label].append(latency)
                if started is not None:
                    samples.setdefault(label + STARTED, []).append(started)
        flushed = fsync_probe(directory, number)
        committed = commit_probe(probe)
        if number >= sizes.wakeup_warmups:
            samples.setdefault(FSYNC, []).append(flushed)
            samples.setdefault(COMMIT, []).append(committed)
    probe.close()
    return samples


def metric_key(label: str) -> str:
    return "_".join("".join(c if c.isalnum() else " " for c in label.lower()).split())


def report_wakeups(report: Report, samples: dict[str, list[float]]) -> None:
    section = "Wake-up, committed → resumed (in-process, SQLite)"
    for label, latencies in samples.items():
        details = {"samples": len(latencies), "p99_ms": percentile(latencies, 0.99)}
        key = f"wakeup_{metric_key(label)}"
        report.add(
            Metric(section, f"{key}_p50", f"{label} p50", percentile(latencies, 0.5), "ms", details=details)
        )
        for baseline in WAKEUP_BASELINES.get(label, ()):
            if baseline not in samples:
                continue
            extra = percentile(latencies, 0.5) - percentile(samples[baseline], 0.5)
            report.add(
                Metric(
                    section,
                    f"{key}_minus_{metric_key(baseline)}_p50",
                    f"{label} − {baseline}, p50",
                    extra,
                    "ms",
                    Target("<=", WAKEUP_EXTRA_P50_TARGET_MS),
                )
            )
    for floor in (FSYNC, COMMIT):
        if CLAIM_GAP not in samples or floor not in samples or "gate.review" not in samples:
            continue
        # what the claim costs beyond gate.review and the one durable write it must make
        left = (
            percentile(samples[CLAIM_GAP], 0.5)
            - percentile(samples["gate.review"], 0.5)
            - percentile(samples[floor], 0.5)
        )
        report.add(
            Metric(
                section,
                f"wakeup_{metric_key(CLAIM_GAP)}_minus_gate_review_minus_{metric_key(floor)}_p50",
                f"{CLAIM_GAP} − gate.review − {floor}, p50",
                left,
                "ms",
            )
        )
