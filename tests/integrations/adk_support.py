"""Counted tools, a scripted model and a runner for the Google ADK tests (no model API).

The model's first turn asks for `transfer` (gated) and `lookup` (not), with the call ids c0-1 and
c0-2; each later turn says "done". `seen` keeps the function responses of the model's last turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.events import Event
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions import BaseSessionService
from google.adk.tools.function_tool import FunctionTool
from google.genai import types
from pydantic import Field

from tests.integrations.ledger import Ledger

APP = "payments"
USER_ID = "u1"
TRANSFER = {"amount": 5, "to": "bob"}
USER = "pay bob 5, then look up t"


def make_tools(ledger: Ledger, *, require_confirmation: bool = False) -> list[Any]:
    def transfer(amount: int, to: str) -> str:
        """Transfer money."""
        ledger.add("transfer", {"amount": amount, "to": to})
        return f"sent {amount} to {to}"

    def lookup(table: str) -> str:
        """Read rows."""
        ledger.add("lookup", {"table": table})
        return f"rows of {table}"

    return [FunctionTool(transfer, require_confirmation=require_confirmation), FunctionTool(lookup)]


class Scripted(BaseLlm):
    """Asks for the two calls in its first turn (`turns` of them), then answers "done"."""

    model: str = "scripted"
    turns: int = 1
    seen: list[tuple[str, Any]] = Field(default_factory=list)
    calls: int = 0

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.calls += 1
        parts = [part for content in llm_request.contents for part in content.parts or []]
        last = llm_request.contents[-1].parts or []
        self.seen = [
            (str(p.function_response.id), p.function_response.response) for p in last if p.function_response
        ]
        turn = sum(1 for part in parts if part.function_call) // 2
        if turn < self.turns:
            calls = [
                types.FunctionCall(id=f"c{turn}-1", name="transfer", args=TRANSFER),
                types.FunctionCall(id=f"c{turn}-2", name="lookup", args={"table": "t"}),
            ]
            content = types.Content(role="model", parts=[types.Part(function_call=call) for call in calls])
        else:
            content = types.Content(role="model", parts=[types.Part(text="done")])
        yield LlmResponse(content=content)


def make_runner(
    model: Scripted,
    tools: list[Any],
    service: BaseSessionService,
    plugins: list[BasePlugin],
    *,
    name: str = "payer",
    **agent_options: Any,
) -> Runner:
    agent = LlmAgent(name=name, model=model, tools=tools, **agent_options)
    return Runner(app=App(name=APP, root_agent=agent, plugins=plugins), session_service=service)


async def run_text(runner: Runner, session_id: str, text: str = USER) -> list[Event]:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    return [e async for e in runner.run_async(user_id=USER_ID, session_id=session_id, new_message=message)]


def paused_calls(events: list[Event]) -> list[types.FunctionCall]:
    """The `adk_request_confirmation` calls the run paused on."""
    return [
        call
        for event in events
        for call in event.get_function_calls()
        if call.name == "adk_request_confirmation" and call.id in (event.long_running_tool_ids or set())
    ]


def final_text(events: list[Event]) -> str | None:
    texts = [p.text for e in events if e.content for p in e.content.parts or [] if p.text]
    return texts[-1] if texts else None


class OneCall(BaseLlm):
    """Asks for one call (`name`, `args`, `call_id`), then says "done"."""

    model: str = "one-call"
    name: str
    args: dict[str, Any]
    call_id: str

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        asked = any(part.function_call for content in llm_request.contents for part in content.parts or [])
        if asked:
            content = types.Content(role="model", parts=[types.Part(text="done")])
        else:
            call = types.FunctionCall(id=self.call_id, name=self.name, args=self.args)
            content = types.Content(role="model", parts=[types.Part(function_call=call)])
        yield LlmResponse(content=content)


def run_once(runner: Runner, text: str) -> list[Event]:
    """A new session's run, in a loop of its own."""

    async def run() -> list[Event]:
        session = await runner.session_service.create_session(app_name=APP, user_id=USER_ID)
        return await run_text(runner, session.id, text)

    return asyncio.run(run())
