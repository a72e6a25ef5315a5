"""Continuing a paused Haystack run once its calls are decided, from any process, exactly once.

    result = resume(agent, saved_messages, hook_context={"signoff": {"thread_id": "ticket-42"}})
    result = resume(agent, None, hook_context=...)  # a waiting run whose process died

The resumed run is the Agent's own: its first model call is answered with the paused tool-call
message (the model is not called again for it), so the agent's `SignoffPauseHook` or
`SignoffConfirmationHook` applies the decisions as `ConfirmationHook` does and Haystack runs the
tools and writes their results; the model then sees exactly the history a waiting
`BlockingConfirmationStrategy` would have produced. Each decided call runs through `gate.run`,
once per request (`.turn`): resuming the same saved history again replays the stored results
and runs nothing twice. Still undecided: the run pauses again (`wait=True` waits for the
decisions instead).

`messages` None: the paused history a waiting `SignoffConfirmationStrategy` (under
`SignoffConfirmationHook`) kept in signoff's store for the thread of `hook_context` before it
waited; it is forgotten once the resumed run ends.
"""

from __future__ import annotations

import copy
import threading
from typing import Any

from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage
from haystack.tools.tool import Tool
from haystack.tools.utils import flatten_tools_or_toolsets

from signoff import Outcome, Pending

from .._kept import KeptRuns
from .context import scope_from_context
from .hook import SignoffConfirmationHook
from .pause import AWAITING_APPROVAL, SignoffPauseHook, StrategyKey, gated_calls, split_paused
from .paused import history_of
from .resuming import resuming
from .strategy import SignoffConfirmationStrategy
from .turn import kept_runs


def resume(
    agent: Agent,
    messages: list[ChatMessage] | None,
    *,
    hook_context: dict[str, Any] | None = None,
    wait: bool = False,
    **run_kwargs: Any,
) -> dict[str, Any]:
    """Continue a paused run (see the module). Returns `agent.run`'s result; if some call is still
    undecided (and not `wait`), the saved messages again, with `exit_reason` "awaiting_approval"."""
    strategies = _strategies(agent)
    if messages is None:
        kept, thread = _kept(strategies, hook_context)
        history = history_of(kept.load(thread))
        result = resume(agent, history, hook_context=hook_context, wait=wait, **run_kwargs)
        if result["exit_reason"] != AWAITING_APPROVAL:
            kept.forget(thread)
        return result
    base, paused, tools = _prepare(agent, messages)
    for _, strategy, call, scope in gated_calls(strategies, paused, tools, hook_context):
        found: Outcome | Pending = (
            strategy.gate.review(call, scope, timeout=strategy.timeout, resumed=True)
            if wait
            else strategy.submit(call, scope, resumed=True)
        )
        if isinstance(found, Pending):
            return _still_paused(messages)
    resumed = _resumed_agent(agent, paused)
    with resuming(call.id for call in paused.tool_calls):
        return resumed.run(messages=base, hook_context=hook_context, tools=tools, **run_kwargs)


async def resume_async(
    agent: Agent,
    messages: list[ChatMessage] | None,
    *,
    hook_context: dict[str, Any] | None = None,
    wait: bool = False,
    **run_kwargs: Any,
) -> dict[str, Any]:
    """`resume` for `Agent.run_async`: waiting (with `wait=True`) holds no thread."""
    strategies = _strategies(agent)
    if messages is None:
        kept, thread = _kept(strategies, hook_context)
        history = history_of(await kept.aload(thread))
        result = await resume_async(agent, history, hook_context=hook_context, wait=wait, **run_kwargs)
        if result["exit_reason"] != AWAITING_APPROVAL:
            await kept.aforget(thread)
        return result
    base, paused, tools = _prepare(agent, messages)
    for _, strategy, call, scope in gated_calls(strategies, paused, tools, hook_context):
        found: Outcome | Pending = (
            await strategy.gate.areview(call, scope, timeout=strategy.timeout, resumed=True)
            if wait
            else await strategy.asubmit(call, scope, resumed=True)
        )
        if isinstance(found, Pending):
            return _still_paused(messages)
    resumed = _resumed_agent(agent, paused)
    with resuming(call.id for call in paused.tool_calls):
        return await resumed.run_async(messages=base, hook_context=hook_context, tools=tools, **run_kwargs)


def _strategies(agent: Agent) -> dict[StrategyKey, Any]:
    """The strategies of the agent's signoff hook at before_tool (the one that paused or waited)."""
    for hook in (agent.hooks or {}).get("before_tool", []):
        if isinstance(hook, SignoffPauseHook | SignoffConfirmationHook):
            return dict(hook.confirmation_strategies)
    raise ValueError(
        "resume needs an Agent with a SignoffPauseHook or a SignoffConfirmationHook at before_tool "
        "(the one that paused or waited)"
    )


def _kept(strategies: dict[StrategyKey, Any], hook_context: dict[str, Any] | None) -> tuple[KeptRuns, str]:
    """Where the thread's waiting run was kept: the store of the hook's signoff strategy."""
    signoff = (
        strategy for strategy in strategies.values() if isinstance(strategy, SignoffConfirmationStrategy)
    )
    strategy = next(signoff, None)
    if strategy is None:
        raise ValueError("resume needs a SignoffConfirmationStrategy in the agent's hook: none keeps a run")
    scope = scope_from_context(hook_context, strategy.defaults, thread_required=True)
    return kept_runs(strategy.gate), scope.thread_id


def _prepare(agent: Agent, messages: list[ChatMessage]) -> tuple[list[ChatMessage], ChatMessage, list[Tool]]:
    base, paused = split_paused(messages)
    return base, paused, flatten_tools_or_toolsets(agent.tools)


def _still_paused(messages: list[ChatMessage]) -> dict[str, Any]:
    return {"messages": list(messages), "last_message": messages[-1], "exit_reason": AWAITING_APPROVAL}


def _resumed_agent(agent: Agent, paused: ChatMessage) -> Agent:
    """A shallow copy of the agent whose first model reply is the paused message."""
    resumed = copy.copy(agent)
    resumed.chat_generator = _FirstReply(agent.chat_generator, paused)
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
