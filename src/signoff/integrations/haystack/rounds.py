"""The model turn a Haystack call is of: its round (`ToolCall.round`, what the unattended cap counts).

`SignoffPauseHook` hands `SignoffConfirmationStrategy.plan` the round itself. Haystack's own
`ConfirmationHook` gives a strategy one call at a time and never the message, so
`SignoffConfirmationHook` names the turn in `asking_round` while the strategies run.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from haystack.dataclasses import ChatMessage

from .._rounds import turn_round

asking_round: ContextVar[str | None] = ContextVar("signoff_haystack_round", default=None)


def round_of(message: ChatMessage) -> str:
    """The model turn's round: the reply's id if its generator gave one, else its calls' ids."""
    reply_id = (message.meta or {}).get("id")
    return turn_round(
        reply_id if isinstance(reply_id, str) else None, (c.id or "" for c in message.tool_calls)
    )


@contextmanager
def asking_for(message: ChatMessage) -> Iterator[None]:
    """`asking_round` is `message`'s round inside the block."""
    token = asking_round.set(round_of(message))
    try:
        yield
    finally:
        asking_round.reset(token)
