"""`SignoffPauseHook`: a durable pause for Haystack 3 agents (which have no breakpoints).

    agent = Agent(chat_generator=..., tools=[...], hooks={"before_tool": [SignoffPauseHook()]})
    result = agent.run(messages, hook_context={"signoff": {"thread_id": "ticket-42"}})
    if result["exit_reason"] == AWAITING_APPROVAL:
        save(result["messages"])   # the process may exit; resume later with `resume(agent, ...)`

At `before_tool`, every gated call of the model's turn becomes a signoff request (one per
(thread_id, tool_call_id): a re-run creates nothing twice). While any is undecided, no tool runs:
the turn's tool-call message is replaced by a placeholder assistant message that carries it (in
`meta["signoff_pending"]`, so the saved history is all a resume needs), and the run stops with
`exit_reason == "awaiting_approval"`. When every call is decided already (or none is gated), the
hook applies the decisions as `ConfirmationHook` does, and the tools run at once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from haystack.components.agents.state.state import State
from haystack.components.agents.state.state_utils import replace_values
from haystack.core.serialization import component_to_dict, default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage
from haystack.dataclasses import ToolCall as HaystackToolCall
from haystack.tools.tool import Tool
from haystack.utils.deserialization import deserialize_component_inplace

from signoff import Gate, Outcome, Pending

from .hook import SignoffConfirmationHook
from .named import declare_named
from .resuming import resumed
from .rounds import round_of
from .strategy import SignoffConfirmationStrategy

AWAITING_APPROVAL = "awaiting_approval"
"""The `exit_reason` of a run paused for approval."""
PENDING_KEY = "signoff_pending"
"""`meta` key of the placeholder message: the paused tool-call message, as `ChatMessage.to_dict()`."""

StrategyKey = str | tuple[str, ...]
Found = Outcome | Pending


class SignoffPauseHook:
    """Pauses the run while gated calls wait for a person; see the module.

    `confirmation_strategies`: `ConfirmationHook`'s mapping (a tool name, a tuple of names, `"*"`)
    to `SignoffConfirmationStrategy`; by default `{"*": SignoffConfirmationStrategy(gate)}`, so the
    rules alone say which calls ask (a tool the map names asks unless a rule turns it off). Tool
    calls need ids (the model's tool_call_id keys a request) and the run needs a thread
    (`hook_context["signoff"]["thread_id"]`).
    """

    allowed_hook_points = ("before_tool",)

    def __init__(
        self,
        confirmation_strategies: Mapping[StrategyKey, SignoffConfirmationStrategy] | None = None,
        *,
        gate: Gate | None = None,
    ) -> None:
        if confirmation_strategies is not None and gate is not None:
            raise ValueError("give either confirmation_strategies= or gate=, not both")
        self.confirmation_strategies: dict[StrategyKey, SignoffConfirmationStrategy] = dict(
            confirmation_strategies or {"*": SignoffConfirmationStrategy(gate)}
        )
        declare_named(self.confirmation_strategies)

    def strategy_for(self, tool_name: str) -> SignoffConfirmationStrategy | None:
        """`ConfirmationHook`'s lookup: the name, then a tuple holding it, then `"*"`."""
        strategies = self.confirmation_strategies
        if tool_name in strategies:
            return strategies[tool_name]
        for key, strategy in strategies.items():
            if isinstance(key, tuple) and tool_name in key:
                return strategy
        return strategies.get("*")

    def gated(
        self, message: ChatMessage, tools: list[Tool], context: dict[str, Any] | None
    ) -> list[tuple[HaystackToolCall, SignoffConfirmationStrategy, Any, Any]]:
        """The message's calls a strategy covers: (tool call, strategy, signoff call, scope)."""
        by_name = {tool.name: tool for tool in tools}
        round = round_of(message)
        gated = []
        for tool_call in message.tool_calls:
            tool = by_name.get(tool_call.tool_name)
            strategy = self.strategy_for(tool_call.tool_name)
            if tool is None or strategy is None:  # an unknown tool fails in Haystack's tool step
                continue
            if not tool_call.id:
                raise ValueError(
                    f"tool call of {tool_call.tool_name!r} has no id: a durable pause keys each request by "
                    "the model's tool_call_id"
                )
            call, scope = strategy.plan(
                tool_call.tool_name,
                tool.description,
                tool_call.arguments,
                tool_call.id,
                context,
                thread_required=True,
                round=round,
            )
            gated.append((tool_call, strategy, call, scope))
        return gated

    def run(self, state: State) -> None:
        message = _pending_message(state)
        if message is None:
            return
        context = state.data.get("hook_context")
        found = [
            strategy.submit(call, scope, resumed=resumed(call.id))
            for _, strategy, call, scope in self.gated(message, state.data.get("tools") or [], context)
        ]
        if any(isinstance(item, Pending) for item in found):
            _pause(state, message, found)
            return
        SignoffConfirmationHook(dict(self.confirmation_strategies)).run(state)

    async def run_async(self, state: State) -> None:
        message = _pending_message(state)
        if message is None:
            return
        context = state.data.get("hook_context")
        found = [
            await strategy.asubmit(call, scope, resumed=resumed(call.id))
            for _, strategy, call, scope in self.gated(message, state.data.get("tools") or [], context)
        ]
        if any(isinstance(item, Pending) for item in found):
            _pause(state, message, found)
            return
        await SignoffConfirmationHook(dict(self.confirmation_strategies)).run_async(state)

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self,
            confirmation_strategies={
                (json.dumps(list(key)) if isinstance(key, tuple) else key): component_to_dict(
                    obj=strategy, name="confirmation_strategy"
                )
                for key, strategy in self.confirmation_strategies.items()
            },
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SignoffPauseHook:
        serialized = data.get("init_parameters", {}).get("confirmation_strategies") or {}
        for key in list(serialized):
            deserialize_component_inplace(serialized, key=key)
        data["init_parameters"]["confirmation_strategies"] = {
            (tuple(json.loads(key)) if key.startswith("[") else key): strategy
            for key, strategy in serialized.items()
        }
        return default_from_dict(cls, data)


def _pending_message(state: State) -> ChatMessage | None:
    messages = state.data.get("messages") or []
    if not messages or not messages[-1].tool_calls:
        return None
    last: ChatMessage = messages[-1]
    return last


def _pause(state: State, message: ChatMessage, found: list[Found]) -> None:
    waiting = [item.request_id for item in found if isinstance(item, Pending)]
    placeholder = ChatMessage.from_assistant(
        text=message.text,
        name=message.name,
        meta={PENDING_KEY: {"message": message.to_dict(), "waiting": waiting}},
    )
    messages = state.data["messages"]
    state.set("messages", [*messages[:-1], placeholder], handler_override=replace_values)
    state.set("stop_run", AWAITING_APPROVAL)


def split_paused(messages: list[ChatMessage]) -> tuple[list[ChatMessage], ChatMessage]:
    """A paused history's messages before the pause, and the tool-call message it holds."""
    if not messages or PENDING_KEY not in (messages[-1].meta or {}):
        raise ValueError(
            "these messages do not end with a paused turn (the last message of a run that stopped "
            f"with exit_reason {AWAITING_APPROVAL!r})"
        )
    return messages[:-1], ChatMessage.from_dict(messages[-1].meta[PENDING_KEY]["message"])


def waiting_requests(messages: list[ChatMessage]) -> list[str]:
    """The ids of the requests a paused history waited for when it paused."""
    split_paused(messages)
    return list(messages[-1].meta[PENDING_KEY]["waiting"])
