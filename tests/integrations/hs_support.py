"""A scripted chat model and counted tools for the Haystack tests (no network)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage, ToolCall
from haystack.tools import tool

import signoff


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


class Ledger:
    """Counts the tools' runs in a file, so that several processes add to one count."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def add(self, tool: str, args: dict[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps({"tool": tool, "args": args, "key": signoff.idempotency_key()}) + "\n")

    def runs(self, tool: str | None = None) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        rows = [json.loads(line) for line in self.path.read_text(encoding="utf-8").splitlines()]
        return [row for row in rows if tool is None or row["tool"] == tool]


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
