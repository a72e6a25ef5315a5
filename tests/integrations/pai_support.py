"""A scripted `FunctionModel` and counted tools for the Pydantic AI tests (no network)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.toolsets import FunctionToolset

import signoff

Turn = list[tuple[str, dict[str, Any], str]] | str


@dataclass
class Script:
    """Answers turn by turn and keeps the messages it was shown each time."""

    turns: list[Turn]
    seen: list[list[ModelMessage]] = field(default_factory=list)

    def respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        turn = self.turns[len(self.seen) - 1]
        if isinstance(turn, str):
            return ModelResponse(parts=[TextPart(turn)])
        return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=key) for name, args, key in turn])

    @property
    def model(self) -> FunctionModel:
        return FunctionModel(self.respond)

    def shown(self, turn: int) -> list[tuple[Any, ...]]:
        """What the model was shown at its `turn`-th call (from 0) after its previous answer."""
        last = self.seen[turn][-1]
        assert isinstance(last, ModelRequest)
        return shown(last)


def shown(request: ModelRequest) -> list[tuple[Any, ...]]:
    """A request's parts as the model gets them: kind, tool, call id, content, outcome."""
    return [
        (
            part.part_kind,
            getattr(part, "tool_name", None),
            getattr(part, "tool_call_id", None),
            part.content,
            getattr(part, "outcome", None),
        )
        for part in request.parts
    ]


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


def make_toolset(ledger: Ledger) -> FunctionToolset[Any]:
    def send_email(to: str, body: str) -> str:
        """Send an email."""
        ledger.add("send_email", {"to": to, "body": body})
        return f"sent to {to}"

    def delete_file(path: str) -> str:
        """Delete a file."""
        ledger.add("delete_file", {"path": path})
        return f"deleted {path}"

    def read_data(table: str) -> str:
        """Read rows."""
        ledger.add("read_data", {"table": table})
        return f"rows of {table}"

    return FunctionToolset([send_email, delete_file, read_data])
