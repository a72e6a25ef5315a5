"""A scripted chat model and counted tools for the Haystack tests (no network)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage, ToolCall
from haystack.tools import tool

from tests.integrations.ledger import Ledger


class Script:
    """The model's turns, in order, and what it was shown at each call."""

    def __init__(self, *turns: ChatMessage | str) -> None:
        self._turns: Iterator[ChatMessage | str] = iter(turns)
        self.seen: list[list[ChatMessage]] = []

    def __call__(self, messages: list[ChatMessage]) -> ChatMessage | str:
        self.seen.append(list(messages))
        return next(self._turns)

    def generator(self) -> MockChatGenerator:
        return MockChatGenerator(response_fn=self)


def calls(*specs: tuple[str, dict[str, Any], str]) -> ChatMessage:
    return ChatMessage.from_assistant(
        tool_calls=[ToolCall(tool_name=name, arguments=args, id=call_id) for name, args, call_id in specs]
    )


def make_tools(ledger: Ledger) -> list[Any]:
    @tool
    def send_email(to: str, body: str) -> str:
        """Send an email."""
        ledger.add("send_email", {"to": to, "body": body})
        return f"sent to {to}"

    @tool
    def read_data(table: str) -> str:
        """Read rows."""
        ledger.add("read_data", {"table": table})
        return f"rows of {table}"

    return [send_email, read_data]


def shown(messages: list[ChatMessage]) -> list[dict[str, Any]]:
    """A history as the model sees it (role, text, tool calls, tool results), without ids of runs."""
    out = []
    for message in messages:
        item: dict[str, Any] = {"role": message.role.value, "text": message.text}
        if message.tool_calls:
            item["calls"] = [(c.tool_name, c.arguments, c.id) for c in message.tool_calls]
        if message.tool_call_result:
            result = message.tool_call_result
            item["result"] = (result.result, result.origin.id, result.error)
        out.append(item)
    return out
