"""The signoff scope of a Pydantic AI run: its thread, and who and what runs it.

The thread is the run's `conversation_id` (`agent.run(..., conversation_id=...)`; a resumed run
finds it again in its message history), unless a `thread_id` function picks one from the
`RunContext` (from `ctx.deps`, say). With the model's `tool_call_id` it keys every request.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic_ai import ModelResponse, RunContext, ToolCallPart

from signoff import Scope

from .._rounds import turn_round

ThreadOf = Callable[[RunContext[Any]], str]


@dataclass(frozen=True, kw_only=True)
class ScopeFields:
    """What signoff adds to every call's scope besides the thread."""

    agent: str | None = None
    app: str | None = None
    requester: str | None = None
    unattended: bool = False
    thread_id: ThreadOf | None = None
    """Picks the thread from the run's context; without it, the run's `conversation_id`."""

    def thread(self, ctx: RunContext[Any]) -> str:
        thread = self.thread_id(ctx) if self.thread_id is not None else ctx.conversation_id
        if not thread:
            raise ValueError(
                "signoff needs the run's thread: run the agent with conversation_id=... (or give "
                "thread_id=lambda ctx: ...); signoff keys each request by (thread, tool_call_id)"
            )
        return str(thread)

    def scope(self, thread_id: str) -> Scope:
        return Scope(
            thread_id=thread_id,
            agent=self.agent,
            app=self.app,
            requester=self.requester,
            unattended=self.unattended,
        )


def call_id(ctx: RunContext[Any]) -> str:
    """The call's `tool_call_id`: with the thread, signoff's key for its request."""
    if not ctx.tool_call_id:
        raise ValueError(
            f"Tool call `{ctx.tool_name}` has no tool_call_id, so its request can't be found again; "
            "make sure the model returns tool call IDs"
        )
    return ctx.tool_call_id


def round_of(ctx: RunContext[Any]) -> str | None:
    """The round of the model turn (the `ModelResponse` in the run's messages) that asked for the
    call: the response's provider id, else its tool calls' ids. None if the call is not found there."""
    for message in reversed(ctx.messages):
        if not isinstance(message, ModelResponse):
            continue
        ids = [part.tool_call_id for part in message.parts if isinstance(part, ToolCallPart)]
        if ctx.tool_call_id in ids:
            return turn_round(message.provider_response_id, ids)
    return None
