"""A scripted `FunctionModel` and counted tools for the Pydantic AI tests (no network)."""

from __future__ import annotations

import asyncio
import threading
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic_ai import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.toolsets import FunctionToolset

from tests.integrations.ledger import Ledger

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


def decide_when_asked(store: Any, thread_id: str, tool_call_id: str, decision: Any) -> threading.Thread:
    """A person in another thread: decides the call's request once it exists."""

    def person() -> None:
        while (request := find(store, thread_id, tool_call_id)) is None:
            time.sleep(0.01)
        store.decide(request.id, decision, actor="alice")

    thread = threading.Thread(target=person, daemon=True)
    thread.start()
    return thread


@pytest.fixture(autouse=True)
def close_run_sync_loop() -> Iterator[None]:
    """`agent.run_sync` leaves the event loop it made open and set; close it after each test, so
    that a later `asyncio.run` does not drop it unclosed (a ResourceWarning, an error here)."""
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            loop = asyncio.get_event_loop_policy().get_event_loop()
        except RuntimeError:  # none is set (asyncio.run unset it)
            return
    if not loop.is_running():
        loop.close()
        asyncio.set_event_loop(None)


def find(store: Any, thread_id: str, tool_call_id: str) -> Any:
    """The call's request, whoever created it (an agent over the server owns its own)."""
    found = [r for r in store.list_requests(thread_id=thread_id) if r.tool_call_id == tool_call_id]
    return found[0] if found else None
