"""Counted tools and a scripted model for the Agents SDK tests (no network: the model is
`agents.testing.ScriptedModel`, tracing is off)."""

from __future__ import annotations

from typing import Any

from agents import Agent, FunctionTool, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

from tests.integrations.ledger import Ledger

set_tracing_disabled(True)

EMAIL = {"to": "alice", "body": "hi"}
USER = "mail alice, then look up t"


def make_tools(ledger: Ledger) -> list[FunctionTool]:
    @function_tool
    def send_email(to: str, body: str) -> str:
        """Send an email."""
        ledger.add("send_email", {"to": to, "body": body})
        return f"sent to {to}"

    @function_tool
    def lookup(table: str) -> str:
        """Read rows."""
        ledger.add("lookup", {"table": table})
        return f"rows of {table}"

    return [send_email, lookup]


def turn_with_two_calls() -> list[Any]:
    """The model's first turn: a gated call and an ungated one."""
    return [
        function_call("send_email", EMAIL, call_id="c1"),
        function_call("lookup", {"table": "t"}, call_id="c2"),
    ]


def script(*, first: bool = True) -> ScriptedModel:
    """The first turn's two calls (unless `first` is False: a resumed run's model), then "done"."""
    steps: list[Any] = [turn_with_two_calls()] if first else []
    return ScriptedModel([*steps, [assistant_message("done")]])


def agent(model: ScriptedModel, tools: list[Any]) -> Agent[Any]:
    return Agent(name="mailer", model=model, tools=tools)


def outputs(model: ScriptedModel) -> list[tuple[str, str]]:
    """The tool results the model was last shown: (call_id, output), in order."""
    last = model.last_call
    assert last is not None
    return [
        (item["call_id"], item["output"])
        for item in last.input
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]


def shown(model: ScriptedModel) -> list[dict[str, Any]]:
    """Every item the model was last shown, as plain dicts."""
    last = model.last_call
    assert last is not None
    return [dict(item) for item in last.input]
