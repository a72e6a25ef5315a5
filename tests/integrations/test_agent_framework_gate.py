"""The Agent Framework adapter's gate: two agents sharing one gate with opposite declarations of
the same tool; a tool nobody is asked about runs without touching the store; an unattended run's
gated calls are one round per model turn, capped by `SIGNOFF_UNATTENDED_MAX_AUTO_RESUME`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

pytest.importorskip("agent_framework")

from agent_framework import AgentSession, MiddlewareFailure

from signoff import Approve, AutoResumeExceeded, Gate, Reject, RequestStatus, RuleSet, ToolEntry
from signoff.integrations.agent_framework import SignoffApprovals, SignoffFailure
from signoff.store import SQLiteStore

from .af_support import TRANSFER, USER, ScriptedClient, make_agent, make_tools
from .ledger import Ledger


def test_two_agents_on_one_gate_keep_their_own_declarations(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    gate = Gate(sqlite_store)  # the rules kept in the store: none, so the declarations say
    careful = SignoffApprovals(gate, tools={"transfer": ToolEntry(requires_approval=True)})
    trusting = SignoffApprovals(gate, tools={"transfer": ToolEntry(requires_approval=False)})
    careful_ledger, trusting_ledger = Ledger(tmp_path / "careful"), Ledger(tmp_path / "trusting")
    careful_agent = make_agent(ScriptedClient(), make_tools(careful_ledger), careful.middleware)
    trusting_client = ScriptedClient()
    trusting_agent = make_agent(trusting_client, make_tools(trusting_ledger), trusting.middleware)
    careful_session, trusting_session = careful_agent.create_session(), trusting_agent.create_session()

    paused = asyncio.run(careful_agent.run(USER, session=careful_session))
    finished = asyncio.run(trusting_agent.run(USER, session=trusting_session))

    assert len(paused.user_input_requests) == 1 and careful_ledger.runs("transfer") == []
    assert finished.text == "done" and [row["args"] for row in trusting_ledger.runs("transfer")] == [TRANSFER]
    assert trusting_client.seen == [("c0-1", "sent 5 to bob"), ("c0-2", "rows of t")]
    (request,) = sqlite_store.list_requests()
    assert request.thread_id == careful_session.session_id and request.status is RequestStatus.PENDING


def test_a_tool_nobody_is_asked_about_runs_without_touching_the_store(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    ledger = Ledger(tmp_path / "ledger")
    approvals = SignoffApprovals(Gate(sqlite_store, rules=RuleSet()))
    assert approvals.gate.asks_nowhere("transfer")
    client = ScriptedClient()
    agent = make_agent(client, make_tools(ledger), approvals.middleware)
    response = asyncio.run(agent.run(USER, session=agent.create_session()))
    assert response.text == "done"
    assert client.seen == [("c0-1", "sent 5 to bob"), ("c0-2", "rows of t")]
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
    approvals = SignoffApprovals(Gate(sqlite_store, rules=rules), unattended=True, wait=True)
    client = ScriptedClient(turns=3)
    agent = make_agent(client, make_tools(ledger), approvals.middleware)
    with pytest.raises(SignoffFailure, match="HITL auto-resume exceeded 2 attempts") as failed:
        asyncio.run(agent.run(USER, session=agent.create_session()))
    assert isinstance(failed.value.error, AutoResumeExceeded)
    requests = sqlite_store.list_requests(limit=100)
    rounds = {request.tool_call_id: request.round for request in requests}
    assert sorted(rounds) == ["c0-1", "c0-2", "c1-1", "c1-2"]  # the third turn asked nothing
    assert rounds["c0-1"] == rounds["c0-2"] != rounds["c1-1"] == rounds["c1-2"]
    assert None not in rounds.values()
    assert {request.status for request in requests} == {RequestStatus.APPROVED}
    assert len(ledger.runs()) == 4


def test_a_turn_with_two_gated_calls_resumes_once_both_are_decided(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    ledger = Ledger(tmp_path / "ledger")
    rules = RuleSet(
        tools={"transfer": ToolEntry(requires_approval=True), "lookup": ToolEntry(requires_approval=True)}
    )
    approvals = SignoffApprovals(Gate(sqlite_store, rules=rules))
    tools = make_tools(ledger)
    agent = make_agent(ScriptedClient(), tools, approvals.middleware)
    session = agent.create_session()
    paused = asyncio.run(agent.run(USER, session=session))
    assert len(paused.user_input_requests) == 2 and ledger.runs() == []
    saved = json.dumps(session.to_dict())
    transfer, lookup = sorted(sqlite_store.list_requests(), key=lambda request: request.tool_call_id)

    sqlite_store.decide(transfer.id, Approve(), actor="alice")
    half = asyncio.run(approvals.resume(agent, AgentSession.from_dict(json.loads(saved))))
    assert [pending.request_id for pending in half.pending] == [lookup.id] and ledger.runs() == []

    sqlite_store.decide(lookup.id, Reject(message="no reads"), actor="alice")
    later = ScriptedClient(turns=0)
    done = asyncio.run(
        approvals.resume(
            make_agent(later, tools, approvals.middleware), AgentSession.from_dict(json.loads(saved))
        )
    )
    assert done.response is not None and done.response.text == "done"
    assert later.seen == [
        ("c0-1", "sent 5 to bob"),
        ("c0-2", "Tool execution for 'lookup' was rejected by the user. With user feedback: no reads"),
    ]
    assert [row["tool"] for row in ledger.runs()] == ["transfer"]


def test_a_scope_that_cannot_be_read_stops_the_run_and_runs_nothing(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    ledger = Ledger(tmp_path / "ledger")
    rules = RuleSet(tools={"transfer": ToolEntry(requires_approval=True)})
    approvals = SignoffApprovals(Gate(sqlite_store, rules=rules))
    agent = make_agent(ScriptedClient(), make_tools(ledger), approvals.middleware)
    session = agent.create_session()
    session.state["signoff"] = {"thread": "typo"}
    with pytest.raises(MiddlewareFailure, match=r"unknown keys \['thread'\]"):
        asyncio.run(agent.run(USER, session=session))
    assert ledger.runs("transfer") == [] and sqlite_store.list_requests() == []
