"""CrewAI's native function-calling path (a model that returns tool calls, run in parallel by
CrewAI's executor), with signoff's hooks: both calls of one model turn gated, waiting at once in
CrewAI's worker threads, each getting its own decision, one round for the turn."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("crewai", reason="CrewAI is tested in the second venv: pip install -e '.[dev-compat]'")

from crewai.llms.base_llm import BaseLLM

from signoff import Edit, Gate, Respond, RuleSet
from signoff.integrations.crewai import SignoffHooks
from signoff.store import SQLiteStore
from tests.integrations.ledger import Ledger

from .crewai_support import kickoff, make_crew

RULES = RuleSet.model_validate(
    {"tools": {"transfer": {"requires_approval": True}, "lookup": {"requires_approval": True}}}
)


class NativeScripted(BaseLLM):
    """Asks for transfer and lookup in one turn (native tool calls), then gives back the tool
    messages it got, by call id."""

    def supports_function_calling(self) -> bool:
        return True

    def call(self, messages: Any, *_: Any, **__: Any) -> Any:  # type: ignore[override]
        results = [m for m in messages if isinstance(m, dict) and m.get("role") == "tool"]
        if results:
            return " | ".join(f"{m['tool_call_id']}: {m['content']}" for m in results)
        return [
            {
                "id": "call-1",
                "type": "function",
                "function": {"name": "transfer", "arguments": '{"amount": 5, "to": "bob"}'},
            },
            {
                "id": "call-2",
                "type": "function",
                "function": {"name": "lookup", "arguments": json.dumps({"table": "t"})},
            },
        ]


def test_two_gated_calls_of_one_turn_each_get_their_own_decision(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    crew, _ = make_crew(ledger, model=NativeScripted(model="native"))

    def people() -> None:
        while len(found := sqlite_store.list_requests(status="pending")) < 2:
            time.sleep(0.01)
        for request in found:
            if request.tool_name == "transfer":
                sqlite_store.decide(request.id, Edit(args={"amount": 7, "to": "carol"}), actor="alice")
            else:
                sqlite_store.decide(request.id, Respond(message="no rows today"), actor="alice")

    deciding = threading.Thread(target=people, daemon=True)
    deciding.start()
    with SignoffHooks(Gate(sqlite_store, rules=RULES)):
        out = kickoff(crew)
    deciding.join()
    assert out == (
        "call-1: The parameters for tool 'transfer' were updated by the user to:\n"
        '{"amount": 7, "to": "carol"}\n\nsent 7 to carol | call-2: no rows today'
    )
    assert [(row["tool"], row["args"]) for row in ledger.runs()] == [
        ("transfer", {"amount": 7, "to": "carol"})
    ]
    rounds = {r.tool_name: r.round for r in sqlite_store.list_requests()}
    assert rounds["transfer"] is not None and rounds["transfer"] == rounds["lookup"]  # one turn, one round
