"""The Google ADK adapter's gate: two agents sharing one gate with opposite declarations of the
same tool; a tool nobody is asked about runs without touching the store; an unattended run's gated
calls are one round per model turn, capped by `SIGNOFF_UNATTENDED_MAX_AUTO_RESUME`; an agent's own
`before_tool_callback`."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService

from signoff import AutoResumeExceeded, Gate, RequestStatus, RuleSet, ToolEntry
from signoff.integrations.google_adk import SignoffPlugin
from signoff.store import SQLiteStore

from .adk_support import (
    APP,
    TRANSFER,
    USER_ID,
    Scripted,
    final_text,
    make_runner,
    make_tools,
    paused_calls,
    run_text,
)
from .ledger import Ledger


def start(runner: Runner) -> tuple[str, list[Any]]:
    async def run() -> tuple[str, list[Any]]:
        session = await runner.session_service.create_session(app_name=APP, user_id=USER_ID)
        return session.id, await run_text(runner, session.id)

    return asyncio.run(run())


def test_two_agents_on_one_gate_keep_their_own_declarations(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    gate = Gate(sqlite_store)  # the rules kept in the store: none, so the declarations say
    careful = SignoffPlugin(gate, tools={"transfer": ToolEntry(requires_approval=True)})
    trusting = SignoffPlugin(gate, tools={"transfer": ToolEntry(requires_approval=False)})
    careful_ledger, trusting_ledger = Ledger(tmp_path / "careful"), Ledger(tmp_path / "trusting")
    service = InMemorySessionService()
    careful_runner = make_runner(Scripted(), make_tools(careful_ledger), service, [careful])
    trusting_model = Scripted()
    trusting_runner = make_runner(trusting_model, make_tools(trusting_ledger), service, [trusting])

    careful_session, paused = start(careful_runner)
    _, finished = start(trusting_runner)

    assert len(paused_calls(paused)) == 1 and careful_ledger.runs("transfer") == []
    assert final_text(finished) == "done"
    assert [row["args"] for row in trusting_ledger.runs("transfer")] == [TRANSFER]
    assert trusting_model.seen == [("c0-1", {"result": "sent 5 to bob"}), ("c0-2", {"result": "rows of t"})]
    (request,) = sqlite_store.list_requests()
    assert request.thread_id == careful_session and request.status is RequestStatus.PENDING


def test_two_agents_of_one_runner_each_with_its_own_callback(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    """`plugin.before_tool` as an agent's `before_tool_callback`: only that agent is gated."""
    gate = Gate(sqlite_store, rules=RuleSet(tools={"transfer": ToolEntry(requires_approval=True)}))
    plugin = SignoffPlugin(gate)
    ledger = Ledger(tmp_path / "ledger")
    runner = make_runner(
        Scripted(), make_tools(ledger), InMemorySessionService(), [], before_tool_callback=plugin.before_tool
    )
    _, paused = start(runner)
    assert len(paused_calls(paused)) == 1 and ledger.runs("transfer") == []
    other = Ledger(tmp_path / "other")
    free = make_runner(Scripted(), make_tools(other), InMemorySessionService(), [])
    _, finished = start(free)
    assert final_text(finished) == "done" and [row["args"] for row in other.runs("transfer")] == [TRANSFER]


def test_a_tool_nobody_is_asked_about_runs_without_touching_the_store(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    ledger = Ledger(tmp_path / "ledger")
    plugin = SignoffPlugin(Gate(sqlite_store, rules=RuleSet()))
    assert plugin.gate.asks_nowhere("transfer")
    model = Scripted()
    _, events = start(make_runner(model, make_tools(ledger), InMemorySessionService(), [plugin]))
    assert final_text(events) == "done"
    assert model.seen == [("c0-1", {"result": "sent 5 to bob"}), ("c0-2", {"result": "rows of t"})]
    assert sqlite_store.list_requests() == []
    assert [row["key"] for row in ledger.runs()] == [None, None]  # no execution record either


def test_unattended_gated_calls_are_one_round_per_model_turn(
    tmp_path: Path, sqlite_store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIGNOFF_UNATTENDED_MAX_AUTO_RESUME", "2")
    ledger = Ledger(tmp_path / "ledger")
    rules = RuleSet(
        tools={"transfer": ToolEntry(requires_approval=True), "lookup": ToolEntry(requires_approval=True)}
    )
    plugin = SignoffPlugin(Gate(sqlite_store, rules=rules), unattended=True, wait=True)
    runner = make_runner(Scripted(turns=3), make_tools(ledger), InMemorySessionService(), [plugin])
    with pytest.raises(RuntimeError, match="HITL auto-resume exceeded 2 attempts") as failed:
        start(runner)
    assert isinstance(failed.value.__cause__, AutoResumeExceeded)
    requests = sqlite_store.list_requests(limit=100)
    rounds = {request.tool_call_id: request.round for request in requests}
    assert sorted(rounds) == ["c0-1", "c0-2", "c1-1", "c1-2"]  # the third turn asked nothing
    assert rounds["c0-1"] == rounds["c0-2"] != rounds["c1-1"] == rounds["c1-2"]
    assert None not in rounds.values()


def test_a_bad_scope_in_the_session_stops_the_run_and_runs_nothing(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    ledger = Ledger(tmp_path / "ledger")
    plugin = SignoffPlugin(
        Gate(sqlite_store, rules=RuleSet(tools={"transfer": ToolEntry(requires_approval=True)}))
    )
    runner = make_runner(Scripted(), make_tools(ledger), InMemorySessionService(), [plugin])

    async def run() -> None:
        session = await runner.session_service.create_session(
            app_name=APP, user_id=USER_ID, state={"signoff": {"thread": "typo"}}
        )
        await run_text(runner, session.id)

    with pytest.raises(RuntimeError, match=r"session.state\['signoff'\] has unknown keys \['thread'\]"):
        asyncio.run(run())
    assert ledger.runs("transfer") == [] and sqlite_store.list_requests() == []
