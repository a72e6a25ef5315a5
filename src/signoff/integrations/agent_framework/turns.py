"""The round of a model turn, for the unattended auto-resume cap (see `signoff.integrations._rounds`).

Agent Framework gives a function middleware no id of the model response that asked for the call,
and runs each call of a turn in a task of its own. `TurnRecorder`, a chat middleware installed
beside signoff's function middleware, sees each model response and keeps its id and its calls'
ids in a context variable, which the calls' tasks inherit. A call it did not see (a client
without chat middleware, a resumed approval) is a round alone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar

from agent_framework import ChatContext, ChatMiddleware, ChatResponse

from .._rounds import turn_round

_turn: ContextVar[tuple[str | None, tuple[str, ...]] | None] = ContextVar("signoff_maf_turn", default=None)


class TurnRecorder(ChatMiddleware):
    """Keeps the last model response's id and call ids for `round_of` (see the module)."""

    async def process(self, context: ChatContext, call_next: Callable[[], Awaitable[None]]) -> None:
        await call_next()
        response = context.result
        if not isinstance(response, ChatResponse):
            return  # a stream: its calls are rounds alone
        ids = tuple(
            content.call_id
            for message in response.messages
            for content in message.contents
            if content.type == "function_call" and content.call_id
        )
        _turn.set((response.response_id, ids) if ids else None)


def round_of(call_id: str) -> str | None:
    """The round of the turn that asked for `call_id`, if `TurnRecorder` saw it."""
    turn = _turn.get()
    if turn is None or call_id not in turn[1]:
        return None
    return turn_round(turn[0], turn[1])
