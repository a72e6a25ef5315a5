"""Continuing a paused Haystack run once its calls are decided, from any process, exactly once.

    result = resume(agent, saved_messages, hook_context={"signoff": {"thread_id": "ticket-42"}})

The resumed run is the Agent's own: its first model call is answered with the paused tool-call
message (the model is not called again for it), so `SignoffPauseHook` applies the decisions as
`ConfirmationHook` does and Haystack runs the tools and writes their results; the model then sees
exactly the history a waiting `BlockingConfirmationStrategy` would have produced. Each decided
call runs through `gate.run`, once per request: resuming the same saved history again replays
the stored results and runs nothing twice. Still undecided: the run pauses again (`wait=True`
waits for the decisions instead).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from typing import Any

from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage
from haystack.tools.tool import Tool
from haystack.tools.utils import flatten_tools_or_toolsets

from signoff import Outcome, Pending, Scope, ToolCall

from .pause import AWAITING_APPROVAL, SignoffPauseHook, split_paused
from .resuming import resuming
from .strategy import SignoffConfirmationStrategy

Decided = tuple[ToolCall, Scope, Outcome, SignoffConfirmationStrategy]


def resume(
    agent: Agent,
    messages: list[ChatMessage],
    *,
    hook_context: dict[str, Any] | None = None,
    wait: bool = False,
    **run_kwargs: Any,
) -> dict[str, Any]:
    """Continue a paused run (see the module). Returns `agent.run`'s result; if some call is still
    undecided (and not `wait`), the saved messages again, with `exit_reason` "awaiting_approval"."""
    hook, base, paused, tools = _prepare(agent, messages)
    decided: list[Decided] = []
    for _, strategy, call, scope in hook.gated(paused, tools, hook_context):
        found: Outcome | Pending = (
            strategy.gate.review(call, scope, timeout=strategy.timeout, resumed=True)
            if wait
            else strategy.submit(call, scope, resumed=True)
        )
        if isinstance(found, Pending):
            return _still_paused(messages)
        decided.append((call, scope, found, strategy))
    resumed = _resumed_agent(agent, paused, tools, decided)
    with resuming(call.id for call in paused.tool_calls):
        return resumed.run(messages=base, hook_context=hook_context, tools=resumed.tools, **run_kwargs)


async def resume_async(
    agent: Agent,
    messages: list[ChatMessage],
    *,
    hook_context: dict[str, Any] | None = None,
    wait: bool = False,
    **run_kwargs: Any,
) -> dict[str, Any]:
    """`resume` for `Agent.run_async`: waiting (with `wait=True`) holds no thread."""
    hook, base, paused, tools = _prepare(agent, messages)
    decided: list[Decided] = []
    for _, strategy, call, scope in hook.gated(paused, tools, hook_context):
        found: Outcome | Pending = (
            await strategy.gate.areview(call, scope, timeout=strategy.timeout, resumed=True)
            if wait
            else await strategy.asubmit(call, scope, resumed=True)
        )
        if isinstance(found, Pending):
            return _still_paused(messages)
        decided.append((call, scope, found, strategy))
    resumed = _resumed_agent(agent, paused, tools, decided)
    with resuming(call.id for call in paused.tool_calls):
        return await resumed.run_async(
            messages=base, hook_context=hook_context, tools=resumed.tools, **run_kwargs
        )


def _prepare(
    agent: Agent, messages: list[ChatMessage]
) -> tuple[SignoffPauseHook, list[ChatMessage], ChatMessage, list[Tool]]:
    hooks = [
        hook for hook in (agent.hooks or {}).get("before_tool", []) if isinstance(hook, SignoffPauseHook)
    ]
    if not hooks:
        raise ValueError(
            "resume needs an Agent with a SignoffPauseHook at before_tool (the one that paused it)"
        )
    base, paused = split_paused(messages)
    return hooks[0], base, paused, flatten_tools_or_toolsets(agent.tools)


def _still_paused(messages: list[ChatMessage]) -> dict[str, Any]:
    return {"messages": list(messages), "last_message": messages[-1], "exit_reason": AWAITING_APPROVAL}


def _resumed_agent(agent: Agent, paused: ChatMessage, tools: list[Tool], decided: list[Decided]) -> Agent:
    """A shallow copy of the agent whose first model reply is the paused message and whose gated
    tools run through `gate.run`."""
    resumed = copy.copy(agent)
    resumed.chat_generator = _FirstReply(agent.chat_generator, paused)
    runs = _DecidedRuns(decided)
    resumed.tools = [runs.wrap(tool) if runs.covers(tool.name) else tool for tool in tools]
    return resumed


class _FirstReply:
    """A chat generator that answers its first call with a given message, then defers."""

    def __init__(self, generator: Any, reply: ChatMessage) -> None:
        self._generator = generator
        self._reply: ChatMessage | None = reply
        self._lock = threading.Lock()

    def _take(self) -> ChatMessage | None:
        with self._lock:
            reply, self._reply = self._reply, None
            return reply

    def run(self, messages: list[ChatMessage], **kwargs: Any) -> dict[str, Any]:
        reply = self._take()
        if reply is not None:
            return {"replies": [reply]}
        replies: dict[str, Any] = self._generator.run(messages=messages, **kwargs)
        return replies

    async def run_async(self, messages: list[ChatMessage], **kwargs: Any) -> dict[str, Any]:
        reply = self._take()
        if reply is not None:
            return {"replies": [reply]}
        if hasattr(self._generator, "run_async"):
            replies: dict[str, Any] = await self._generator.run_async(messages=messages, **kwargs)
        else:
            replies = self._generator.run(messages=messages, **kwargs)
        return replies

    def __getattr__(self, name: str) -> Any:
        return getattr(self._generator, name)


class _DecidedRuns:
    """The decided calls that may run, each bound to its request. Haystack invokes a tool with its
    arguments only, so a run is matched to its call by the final arguments (a tool's state inputs
    are added to them), the first unclaimed match first."""

    def __init__(self, decided: list[Decided]) -> None:
        self._open: dict[str, list[Decided]] = {}
        for entry in decided:
            if entry[2].execute and entry[2].request_id is not None:
                self._open.setdefault(entry[0].name, []).append(entry)
        self._lock = threading.Lock()

    def covers(self, tool_name: str) -> bool:
        return tool_name in self._open

    def _claim(self, tool_name: str, kwargs: dict[str, Any]) -> Decided | None:
        with self._lock:
            entries = self._open.get(tool_name, [])
            for index, entry in enumerate(entries):
                final = entry[2].final_tool_params or {}
                if all(name in kwargs and kwargs[name] == value for name, value in final.items()):
                    return entries.pop(index)
        return None

    def wrap(self, tool: Tool) -> Tool:
        wrapped = copy.copy(tool)
        if tool.function is not None:
            wrapped.function = self._bound(tool.name, tool.function)
        if tool.async_function is not None:
            wrapped.async_function = self._abound(tool.name, tool.async_function)
        return wrapped

    def _bound(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def run(**kwargs: Any) -> Any:
            entry = self._claim(name, kwargs)
            if entry is None:
                return function(**kwargs)
            call, scope, _, strategy = entry
            return strategy.gate.run(call, lambda **_: function(**kwargs), scope, resumed=True).value

        return run

    def _abound(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        async def run(**kwargs: Any) -> Any:
            entry = self._claim(name, kwargs)
            if entry is None:
                return await function(**kwargs)
            call, scope, _, strategy = entry

            async def once(**_: Any) -> Any:
                return await function(**kwargs)

            return (await strategy.gate.arun(call, once, scope, resumed=True)).value

        return run
