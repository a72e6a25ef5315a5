"""Section 1 of bench/adapters.py: a call that needs no approval through each framework's own HITL
hook and through signoff's adapter for it, as `Side`s to run in turns (CrewAI's, which lives in the
second venv, is in bench/adapters_crewai.py; the Claude Agent SDK's in bench/adapters_claude.py)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from adapters_common import SEARCH_ARGS, THREAD, AsyncHook, Clock, Side, async_ns, check, sync_ns
from signoff import Gate


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
