"""A scripted chat model and counted tools for the LangChain tests (no network)."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from pydantic import Field

from tests.integrations.ledger import Ledger


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
