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
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from core import (
    Metric,
    Report,
    Target,
    machine_info,
    percentile,
    print_report,
    progress,
    wait_until_watched,
    write_results,
)
from signoff import Approve, Gate, Pending, RuleSet, Scope, ToolCall
from signoff.store import SQLiteStore, Store
from waiters import ROOT, extract

RESULTS_PATH = Path(__file__).resolve().parent / "results" / "adapters.json"
RULES = {"tools": {"send_email": {"requires_approval": True}, "search": {"requires_approval": False}}}
THREAD = "bench-adapters"
SEARCH_ARGS = {"query": "weather in Paris"}
EMAIL_ARGS = {"to": "bob@example.com", "subject": "Quarterly report", "body": "Numbers attached."}
HOOK_RATIO_TARGET = 1.0
"""signoff's hook / the framework's own, for a call that needs no approval."""
WAKEUP_EXTRA_P50_TARGET_MS = 1.0
"""An adapter's wake-up p50 minus the gate's own."""
RESUME_TIMEOUT = 30.0


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


# -- timing -----------------------------------------------------------------------------------


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


# -- 1. hooks ---------------------------------------------------------------------------------


def langchain_hooks(gate: Gate, clock: Clock = time.perf_counter_ns) -> tuple[list[Side], Callable[[], None]]:
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langchain.agents.middleware.types import ToolCallRequest
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.runnables.config import var_child_runnable_config
    from langchain_core.tools import tool
    from langgraph._internal._constants import CONFIG_KEY_SCRATCHPAD
    from langgraph.prebuilt.tool_node import ToolRuntime
    from langgraph.runtime import Runtime

    from signoff.integrations.langchain import SignoffMiddleware

    @tool
    def search(query: str) -> str:
        """Search the web."""
        return query

    config: Any = {"configurable": {"thread_id": THREAD, CONFIG_KEY_SCRATCHPAD: fresh_scratchpad()}}
    token = var_child_runnable_config.set(config)
    call: Any = {"name": "search", "args": SEARCH_ARGS, "id": "lc-1", "type": "tool_call"}
    state: Any = {"messages": [HumanMessage("weather?"), AIMessage("", tool_calls=[call])]}
    runtime: Any = Runtime()
    tool_runtime: Any = ToolRuntime(
        state=state,
        context=None,
        config=config,
        stream_writer=lambda _: None,
        tool_call_id="lc-1",
        store=None,
    )
    request = ToolCallRequest(tool_call=call, tool=search, state=state, runtime=tool_runtime)
    answer = ToolMessage("sunny", tool_call_id="lc-1")

    def handler(_: Any) -> ToolMessage:
        return answer

    stock = HumanInTheLoopMiddleware(interrupt_on={"send_email": True})
    per_call = HumanInTheLoopMiddleware(interrupt_on={"send_email": True}, interrupt_mode="per_call")
    durable = SignoffMiddleware(interrupt_on={"send_email": True}, gate=gate)
    waiting = SignoffMiddleware(interrupt_on={"send_email": True}, gate=gate, wait=True)
    check(stock.after_model(state, runtime) is None, "stock after_model lets search through")
    check(durable.after_model(state, runtime) is None, "signoff after_model lets search through")
    check(waiting.wrap_tool_call(request, handler) is answer, "signoff wrap_tool_call runs search")
    sides = [
        Side(
            "after_model: HumanInTheLoopMiddleware",
            lambda n: sync_ns(lambda: stock.after_model(state, runtime), n, clock),
        ),
        Side(
            "after_model: SignoffMiddleware",
            lambda n: sync_ns(lambda: durable.after_model(state, runtime), n, clock),
        ),
        Side(
            "wrap_tool_call: HumanInTheLoopMiddleware",
            lambda n: sync_ns(lambda: stock.wrap_tool_call(request, handler), n, clock),
        ),
        Side(
            "wrap_tool_call: SignoffMiddleware",
            lambda n: sync_ns(lambda: durable.wrap_tool_call(request, handler), n, clock),
        ),
        Side(
            "wrap_tool_call: SignoffMiddleware(wait=True)",
            lambda n: sync_ns(lambda: waiting.wrap_tool_call(request, handler), n, clock),
        ),
        Side(
            "wrap_tool_call: HumanInTheLoopMiddleware(per_call)",
            lambda n: sync_ns(lambda: per_call.wrap_tool_call(request, handler), n, clock),
        ),
    ]
    return sides, lambda: var_child_runnable_config.reset(token)


def fresh_scratchpad() -> Any:
    """The scratchpad LangGraph gives a node's task on a first run (no resume value), which
    `SignoffMiddleware` reads to tell a resume from a first run (outside a graph it would look the
    calls up in the store, to be safe)."""
    from itertools import count

    from langgraph._internal._scratchpad import PregelScratchpad

    counter = count()
    return PregelScratchpad(
        step=1,
        stop=25,
        call_counter=lambda: next(counter),
        interrupt_counter=lambda: next(counter),
        get_null_resume=lambda consume=False: None,
        resume=[],
        subgraph_counter=lambda: next(counter),
    )


def haystack_hooks(gate: Gate, clock: Clock = time.perf_counter_ns) -> list[Side]:
    from haystack.hooks.human_in_the_loop import BlockingConfirmationStrategy, NeverAskPolicy, SimpleConsoleUI

    from signoff.integrations.haystack import SignoffConfirmationStrategy

    stock = BlockingConfirmationStrategy(
        confirmation_policy=NeverAskPolicy(), confirmation_ui=SimpleConsoleUI()
    )
    ours = SignoffConfirmationStrategy(gate)
    arguments: dict[str, Any] = {
        "tool_name": "search",
        "tool_description": "Search the web.",
        "tool_params": SEARCH_ARGS,
        "tool_call_id": "hs-1",
        "confirmation_strategy_context": {"signoff": {"thread_id": THREAD}},
    }
    check(ours.run(**arguments).execute, "signoff's strategy lets search through")
    return [
        Side(
            "BlockingConfirmationStrategy(NeverAskPolicy).run",
            lambda n: sync_ns(lambda: stock.run(**arguments), n, clock),
        ),
        Side("SignoffConfirmationStrategy.run", lambda n: sync_ns(lambda: ours.run(**arguments), n, clock)),
    ]


def pydantic_ai_hooks(
    gate: Gate, loop: asyncio.AbstractEventLoop, clock: Clock = time.perf_counter_ns
) -> list[Side]:
    from pydantic_ai import RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.toolsets import FunctionToolset
    from pydantic_ai.usage import RunUsage

    from signoff.integrations.pydantic_ai import signoff_approval

    class Answering(FunctionToolset[Any]):
        """Returns at once: only the approval wrappers are measured."""

        async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: Any, tool: Any) -> Any:
            return "sunny"

    def search(query: str) -> str:
        """Search the web."""
        return query

    ctx: Any = RunContext(
        deps=None,
        model=TestModel(),
        usage=RunUsage(),
        tool_call_id="pai-1",
        tool_name="search",
        conversation_id=THREAD,
    )
    toolset = Answering([search])
    stock = toolset.approval_required(lambda ctx, tool_def, args: tool_def.name == "send_email")
    ours = signoff_approval(toolset, gate)
    tool = loop.run_until_complete(toolset.get_tools(ctx))["search"]
    check(loop.run_until_complete(ours.call_tool("search", SEARCH_ARGS, ctx, tool)) == "sunny", "search runs")
    return [
        Side(
            "approval_required(predicate).call_tool",
            lambda n: async_ns(lambda: stock.call_tool("search", SEARCH_ARGS, ctx, tool), n, loop, clock),
        ),
        Side(
            "signoff_approval(...).call_tool",
            lambda n: async_ns(lambda: ours.call_tool("search", SEARCH_ARGS, ctx, tool), n, loop, clock),
        ),
    ]


def openai_agents_hooks(
    gate: Gate, loop: asyncio.AbstractEventLoop, clock: Clock = time.perf_counter_ns
) -> list[Side]:
    from agents import RunContextWrapper, function_tool
    from agents.util._approvals import evaluate_function_tool_approval

    from signoff.integrations.openai_agents import SignoffApproval
    from signoff.integrations.openai_agents.context import bound_thread

    def search(query: str) -> str:
        """Search the web."""
        return query

    async def never(ctx: Any, params: dict[str, Any], call_id: str) -> bool:
        return False

    plain = function_tool(search)
    conditional = function_tool(search, needs_approval=never)
    approval = SignoffApproval(gate)
    ours = approval.gate_tool(function_tool(search))
    ctx: Any = RunContextWrapper(context={"signoff": {"thread_id": THREAD}})
    arguments = json.dumps(SEARCH_ARGS)

    def evaluate(tool: Any) -> Callable[[int], float]:
        return lambda n: async_ns(
            lambda: evaluate_function_tool_approval(tool, ctx, arguments, "oa-1"), n, loop, clock
        )

    def in_run(measure: Callable[[int], float]) -> Callable[[int], float]:
        """Timed inside a `SignoffApproval.run` (its thread and context bound), as its tools run."""

        def timed(n: int) -> float:
            with bound_thread(approval.defaults, THREAD, ctx.context):
                return measure(n)

        return timed

    evaluated = loop.run_until_complete(evaluate_function_tool_approval(ours, ctx, arguments, "oa-1"))
    check(evaluated.outcome == "invoke", "signoff's predicate lets search through")
    with bound_thread(approval.defaults, THREAD, ctx.context):
        check(ours.needs_approval is False, "in a SignoffApproval run, search's rules say False")
    return [
        Side("needs_approval=False", in_run(evaluate(plain))),
        Side("needs_approval=<function saying no>", in_run(evaluate(conditional))),
        Side("signoff needs_approval (in SignoffApproval.run)", in_run(evaluate(ours))),
        Side("signoff needs_approval (under Runner.run)", evaluate(ours)),
    ]


def agent_framework_hooks(
    gate: Gate, loop: asyncio.AbstractEventLoop, clock: Clock = time.perf_counter_ns
) -> list[Side]:
    from agent_framework import FunctionInvocationContext, FunctionMiddleware, tool
    from agent_framework._middleware import FunctionMiddlewarePipeline

    from signoff.integrations.agent_framework import SignoffApprovals

    @tool
    async def search(query: str) -> str:
        """Search the web."""  # async: a sync tool runs in a thread (asyncio.to_thread), which would dominate
        return query

    class PassThrough(FunctionMiddleware):
        async def process(self, context: Any, call_next: Callable[[], Awaitable[None]]) -> None:
            await call_next()

    async def final(context: Any) -> Any:
        return await search.invoke(arguments=context.arguments, context=context)

    approvals = SignoffApprovals(gate, thread_id=THREAD)
    passing = FunctionMiddlewarePipeline(PassThrough())
    ours = FunctionMiddlewarePipeline(approvals.function_middleware)

    def through(pipeline: Any) -> AsyncHook:
        # what the function-invocation loop does per call when an agent has function middleware
        def call() -> Awaitable[Any]:
            context = FunctionInvocationContext(function=search, arguments=dict(SEARCH_ARGS))
            context.metadata["call_id"] = "maf-1"
            return pipeline.execute(context, final)

        return call

    def bare() -> Awaitable[Any]:
        return search.invoke(arguments=dict(SEARCH_ARGS))  # what it does with no middleware

    result = loop.run_until_complete(through(ours)())
    check(result[0].text == SEARCH_ARGS["query"], "search runs through signoff's middleware")
    return [
        Side("no middleware (tool.invoke)", lambda n: async_ns(bare, n, loop, clock)),
        Side("pass-through FunctionMiddleware", lambda n: async_ns(through(passing), n, loop, clock)),
        Side("SignoffApprovals' FunctionMiddleware", lambda n: async_ns(through(ours), n, loop, clock)),
    ]


def google_adk_hooks(
    gate: Gate, loop: asyncio.AbstractEventLoop, clock: Clock = time.perf_counter_ns
) -> list[Side]:
    from google.adk.agents import LlmAgent
    from google.adk.agents.invocation_context import InvocationContext
    from google.adk.plugins.base_plugin import BasePlugin
    from google.adk.plugins.plugin_manager import PluginManager
    from google.adk.sessions import InMemorySessionService
    from google.adk.tools._confirmation_utils import apply_confirmation_gate
    from google.adk.tools.function_tool import FunctionTool
    from google.adk.tools.tool_context import ToolContext

    from signoff.integrations.google_adk import SignoffPlugin

    async def search(query: str) -> str:
        """Search the web."""  # async: a sync tool may run on ADK's thread pool, which would dominate
        return query

    class PassThrough(BasePlugin):
        async def before_tool_callback(self, *, tool: Any, tool_args: Any, tool_context: Any) -> None:
            return None

    tool = FunctionTool(search)
    service = InMemorySessionService()
    session = loop.run_until_complete(
        service.create_session(app_name="bench", user_id="u", session_id=THREAD)
    )
    agent = LlmAgent(name="bench", tools=[tool])

    def through(plugins: list[Any]) -> AsyncHook:
        manager = PluginManager(plugins=plugins)
        context = InvocationContext(
            session_service=service, invocation_id="e-1", agent=agent, session=session, plugin_manager=manager
        )

        # what ADK's tool caller does per call: the plugins' before-tool callbacks, its own
        # confirmation gate (not asked: no require_confirmation), then the tool
        async def call() -> Any:
            args = dict(SEARCH_ARGS)
            tool_context = ToolContext(invocation_context=context, function_call_id="adk-1")
            answer = await manager.run_before_tool_callback(
                tool=tool, tool_args=args, tool_context=tool_context
            )
            if answer is None:
                answer = await apply_confirmation_gate(tool, args, tool_context)
            if answer is None:
                answer = await tool.run_async(args=args, tool_context=tool_context)
            return answer

        return call

    ours = SignoffPlugin(gate, thread_id=THREAD)
    result = loop.run_until_complete(through([ours])())
    check(result == SEARCH_ARGS["query"], "search runs through signoff's plugin")
    return [
        Side("no plugin", lambda n: async_ns(through([]), n, loop, clock)),
        Side(
            "pass-through BasePlugin", lambda n: async_ns(through([PassThrough(name="pass")]), n, loop, clock)
        ),
        Side("SignoffPlugin", lambda n: async_ns(through([ours]), n, loop, clock)),
    ]


def crewai_hooks(gate: Gate, clock: Clock = time.thread_time_ns) -> list[Side]:
    """The hook functions alone (CrewAI's own approval hook, signoff's before-hook) on one
    context; and per call what CrewAI does around a tool's run: a before-hook context and its
    dispatch, then an after-hook context and its dispatch; with no hooks, with CrewAI's own approval hook
    (`@before_tool_call(tools=["send_email"])` asking at the console, as its docs show), and with
    signoff's (its before-hook; its after-hook is registered only while a call is blocked). Hooks
    are process-global: each side registers its own around its rounds. The thread's CPU clock:
    the crew runs hooks in its own thread."""
    os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
    os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
    os.environ.setdefault("OTEL_SDK_DISABLED", "true")
    from crewai.hooks import (
        before_tool_call,
        get_before_tool_call_hooks,
        register_before_tool_call_hook,
        unregister_before_tool_call_hook,
    )
    from crewai.hooks.tool_hooks import (
        ToolCallHookContext,
        run_after_tool_call_hooks,
        run_before_tool_call_hooks,
    )
    from crewai.tools import tool

    from signoff.integrations.crewai import SignoffHooks
    from signoff.integrations.crewai.registry import before_tool_call as signoff_before

    @tool("search")
    def search(query: str) -> str:
        """Search the web."""
        return query

    structured = search.to_structured_tool()

    asked: list[str] = []

    def console_approval(ctx: Any) -> bool | None:
        asked.append(ctx.tool_name)
        return None if ctx.request_human_input(prompt="Send it?").lower() == "approve" else False

    registered = get_before_tool_call_hooks()
    before_tool_call(tools=["send_email"])(console_approval)  # registers a filtering wrapper
    [own_hook] = [hook for hook in get_before_tool_call_hooks() if hook not in registered]
    unregister_before_tool_call_hook(own_hook)  # registered per side, below

    def one_call() -> None:
        args = dict(SEARCH_ARGS)
        before = ToolCallHookContext(tool_name="search", tool_input=args, tool=structured)
        if run_before_tool_call_hooks(before):
            raise RuntimeError("benchmark setup is wrong: search was blocked")
        after = ToolCallHookContext(
            tool_name="search", tool_input=args, tool=structured, tool_result="r", raw_tool_result="r"
        )
        run_after_tool_call_hooks(after)

    def bare(n: int) -> float:
        return sync_ns(one_call, n, clock)

    def own(n: int) -> float:
        register_before_tool_call_hook(own_hook)
        try:
            return sync_ns(one_call, n, clock)
        finally:
            unregister_before_tool_call_hook(own_hook)
            check(not asked, "CrewAI's own hook asks nobody about search")

    ours = SignoffHooks(gate, thread_id=THREAD)

    def signoff_side(n: int) -> float:
        with ours:
            return sync_ns(one_call, n, clock)

    context = ToolCallHookContext(tool_name="search", tool_input=dict(SEARCH_ARGS), tool=structured)

    def own_alone(n: int) -> float:
        return sync_ns(lambda: own_hook(context), n, clock)

    def signoff_alone(n: int) -> float:
        with ours:
            return sync_ns(lambda: signoff_before(context), n, clock)

    with ours:
        check(signoff_before(context) is None, "signoff's hook lets search through")
    return [
        Side("no hooks (CrewAI's dispatch)", bare),
        Side("CrewAI's own approval hook, dispatched", own),
        Side("SignoffHooks, dispatched", signoff_side),
        Side("CrewAI's own approval hook (the function)", own_alone),
        Side("signoff's before-hook (the function)", signoff_alone),
    ]


def installed(module: str) -> bool:
    """Whether a framework is installed here (CrewAI lives in the second venv, .venv-compat)."""
    import importlib.util

    return importlib.util.find_spec(module) is not None


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
        from adapters_claude import measure_claude_hooks  # its own module: this one is long enough

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


# -- 3. wake-ups ------------------------------------------------------------------------------

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


def wakeup_samples(gate: Gate, waiters: dict[str, Waiter], sizes: Sizes) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {label: [] for label in waiters}
    labels = list(waiters)
    for number in range(sizes.wakeup_warmups + sizes.wakeups):
        for label in labels if number % 2 == 0 else reversed(labels):
            call = ToolCall(name="send_email", args=EMAIL_ARGS, id=f"wake-{number}-{labels.index(label)}")
            latency, started = one_wakeup(gate, waiters[label], call)
            if number >= sizes.wakeup_warmups:
                samples[label].append(latency)
                if started is not None:
                    samples.setdefault(label + STARTED, []).append(started)
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
