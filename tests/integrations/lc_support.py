"""A scripted chat model and counted tools for the LangChain tests (no network)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from pydantic import Field

import signoff


class ScriptedModel(GenericFakeChatModel):
    """Answers from a script and keeps what it was shown, call by call (async runs call
    `_generate` in an executor)."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> ScriptedModel:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def calls(*specs: tuple[str, dict[str, Any], str]) -> AIMessage:
    return AIMessage(
        content="", tool_calls=[{"name": n, "args": a, "id": i, "type": "tool_call"} for n, a, i in specs]
    )


def script(*turns: AIMessage | str) -> ScriptedModel:
    return ScriptedModel(messages=iter(turns))


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


def make_tools(ledger: Ledger) -> list[BaseTool]:
    @tool
    def send_email(to: str, body: str) -> str:
        """Send an email."""
        ledger.add("send_email", {"to": to, "body": body})
        return f"sent to {to}"

    @tool
    def delete_file(path: str) -> str:
        """Delete a file."""
        ledger.add("delete_file", {"path": path})
        return f"deleted {path}"

    @tool
    def read_data(table: str) -> str:
        """Read rows."""
        ledger.add("read_data", {"table": table})
        return f"rows of {table}"

    return [send_email, delete_file, read_data]


def tool_messages(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    """The ToolMessages of a history, as the fields that matter to the model and to UIs."""
    return [
        {
            "tool_call_id": m.tool_call_id,
            "name": m.name,
            "status": m.status,
            "content": m.content,
            "additional_kwargs": m.additional_kwargs,
        }
        for m in messages
        if isinstance(m, ToolMessage)
    ]


def shown(messages: list[BaseMessage]) -> list[tuple[str, Any]]:
    """A history as (type, content) pairs, and the tool calls of AI messages."""
    return [
        (m.type, m.tool_calls if isinstance(m, AIMessage) and m.tool_calls else m.content) for m in messages
    ]
