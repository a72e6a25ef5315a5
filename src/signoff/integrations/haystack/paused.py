"""A paused Haystack history: the run's messages with its waiting turn held in a placeholder.

The last message of a paused history is a placeholder assistant message carrying the turn's
tool-call message (in `meta["signoff_pending"]`) and the ids of the requests it waited for, so
that the history is all a resume needs. `SignoffPauseHook` pauses a run with it; a waiting
`SignoffConfirmationStrategy` keeps the same history in signoff's store before it waits.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from haystack.dataclasses import ChatMessage

AWAITING_APPROVAL = "awaiting_approval"
"""The `exit_reason` of a run paused for approval."""
PENDING_KEY = "signoff_pending"
"""`meta` key of the placeholder message: the paused tool-call message, as `ChatMessage.to_dict()`."""


def paused_history(messages: Sequence[ChatMessage], waiting: Sequence[str]) -> list[ChatMessage]:
    """`messages`, whose last one is the turn's tool-call message, paused on the requests `waiting`."""
    message = messages[-1]
    placeholder = ChatMessage.from_assistant(
        text=message.text,
        name=message.name,
        meta={PENDING_KEY: {"message": message.to_dict(), "waiting": list(waiting)}},
    )
    return [*messages[:-1], placeholder]


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


def history_json(messages: Sequence[ChatMessage]) -> str:
    """A history as kept in signoff's store: its messages' `to_dict()`, as JSON."""
    return json.dumps([message.to_dict() for message in messages])


def history_of(text: str) -> list[ChatMessage]:
    return [ChatMessage.from_dict(message) for message in json.loads(text)]
