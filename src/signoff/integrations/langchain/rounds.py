"""The round of a LangChain model turn: what an unattended run's auto-resume cap counts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage

from .._rounds import turn_round


def round_of(message: AIMessage) -> str:
    """The model turn's round: its AIMessage's id (LangChain gives every generated one an id)."""
    return turn_round(message.id, (call.get("id") or "" for call in message.tool_calls))


def round_in(state: Any, tool_call_id: str) -> str | None:
    """The round of the turn whose AIMessage in `state` asked for `tool_call_id` (wait mode)."""
    messages = state.get("messages", []) if isinstance(state, Mapping) else []
    for message in reversed(messages):
        if isinstance(message, AIMessage) and any(
            call.get("id") == tool_call_id for call in message.tool_calls
        ):
            return round_of(message)
    return None
