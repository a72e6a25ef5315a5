"""SignoffMiddleware(interrupt_mode="per_call"), as the stock middleware's per-call mode: one
interrupt per gated call, raised in the tools node with the stock `ToolApprovalRequest` payload;
the same ToolMessages as the stock per-call mode for the same decisions; several calls in one turn
decided in any order; a resume value's decision applied only when trusted, and checked first."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import ValidationError

from signoff import Approve, Gate, Reject, RequestStatus
from signoff.integrations.langchain import SignoffMiddleware, aresume_when_decided, resume_when_decided
from signoff.store import SQLiteStore

from .lc_support import Ledger, ScriptedModel, calls, make_tools, script, shown, tool_messages
from .test_langchain_parity import DECISIONS, EMAIL, one_call

CONFIG: Any = {"configurable": {"thread_id": "t1"}}
ASK = {"messages": [{"role": "user", "content": "tidy up"}]}
INTERRUPT_ON: Any = {"send_email": True, "delete_file": {"allowed_decisions": ["approve", "reject"]}}


def agent_with(middleware: Any, model: ScriptedModel, ledger: Ledger) -> Any:
    return create_agent(
        model, tools=make_tools(ledger), middleware=[middleware], checkpointer=InMemorySaver()
    )


def per_call(gate: Gate, **options: Any) -> SignoffMiddleware:
    return SignoffMiddleware(interrupt_on=INTERRUPT_ON, gate=gate, interrupt_mode="per_call", **options)


@pytest.mark.parametrize("name", DECISIONS)
def test_each_decision_gives_the_stock_per_call_messages(
    tmp_path: Path, sqlite_store: SQLiteStore, lc_gate: Gate, name: str
) -> None:
    stock_decision, decision, runs = DECISIONS[name]
    stock_model = one_call()
    stock = agent_with(
        HumanInTheLoopMiddleware(interrupt_on=INTERRUPT_ON, interrupt_mode="per_call"),
        stock_model,
        Ledger(tmp_path / "stock"),
    )
    (stock_pause,) = stock.invoke(ASK, CONFIG, version="v2").interrupts
    stock.invoke(Command(resume={stock_pause.id: stock_decision}), CONFIG, version="v2")

    ledger = Ledger(tmp_path / "signoff")
    model = one_call()
    agent = agent_with(per_call(lc_gate), model, ledger)
    (pause,) = agent.invoke(ASK, CONFIG, version="v2").interrupts
    request = lc_gate.store.find_request("t1", "c1")
    assert request is not None
    # the stock keys and values; the description is signoff's card (its args as JSON)
    mine = {k: v for k, v in pause.value.items() if k not in ("signoff", "description")}
    assert mine == {k: v for k, v in stock_pause.value.items() if k != "description"}
    assert pause.value["description"] == request.description
    assert pause.value["description"].startswith(
        "Tool execution requires approval\n\nTool: send_email\nArgs: "
    )
    assert pause.value["signoff"]["requests"][0]["request_id"] == request.id
    assert ledger.runs() == [] and len(model.seen) == 1

    sqlite_store.decide(request.id, decision, actor="alice")
    agent.invoke(Command(resume=True), CONFIG, version="v2")
    assert shown(model.seen[1]) == shown(stock_model.seen[1])
    assert tool_messages(model.seen[1]) == tool_messages(stock_model.seen[1])
    assert len(ledger.runs("send_email")) == runs
    assert [row["key"] for row in ledger.runs()] == [request.id] * runs


def three_calls() -> ScriptedModel:
    return script(
        calls(
            ("send_email", EMAIL, "c1"),
            ("read_data", {"table": "users"}, "c2"),
            ("delete_file", {"path": "/tmp/report"}, "c3"),
        ),
        "done",
    )


def test_several_calls_interrupt_each_and_are_decided_in_any_order(
    tmp_path: Path, sqlite_store: SQLiteStore, lc_gate: Gate
) -> None:
    ledger = Ledger(tmp_path / "l")
    model = three_calls()
    middleware = per_call(lc_gate)
    agent = agent_with(middleware, model, ledger)
    first = agent.invoke(ASK, CONFIG, version="v2")
    assert sorted(pause.value["tool_call_id"] for pause in first.interrupts) == ["c1", "c3"]
    assert [row["tool"] for row in ledger.runs()] == ["read_data"]  # ungated: ran meanwhile
    delete = lc_gate.store.find_request("t1", "c3")
    assert delete is not None and delete.rule.allowed_decisions == ("approve", "reject")

    sqlite_store.decide(delete.id, Reject(message="keep it"), actor="alice")
    ids = {pause.value["tool_call_id"]: pause.id for pause in first.interrupts}
    second = agent.invoke(Command(resume={ids["c1"]: True, ids["c3"]: True}), CONFIG, version="v2")
    assert [pause.value["tool_call_id"] for pause in second.interrupts] == ["c1"]
    assert len(model.seen) == 1

    mail = lc_gate.store.find_request("t1", "c1")
    assert mail is not None
    sqlite_store.decide(mail.id, Approve(), actor="alice")
    done = resume_when_decided(agent, CONFIG, middleware)
    assert done.interrupts == () and done.value["messages"][-1].content == "done"
    assert [(m["tool_call_id"], m["status"]) for m in tool_messages(model.seen[1])] == [
        ("c1", "success"),
        ("c2", "success"),
        ("c3", "error"),
    ]
    assert sorted(row["tool"] for row in ledger.runs()) == ["read_data", "send_email"]


def test_under_ainvoke_the_helper_waits_and_resumes(
    tmp_path: Path, sqlite_store: SQLiteStore, lc_gate: Gate
) -> None:
    ledger = Ledger(tmp_path / "l")
    model = three_calls()
    middleware = per_call(lc_gate)
    agent = agent_with(middleware, model, ledger)

    async def scenario() -> Any:
        first = await agent.ainvoke(ASK, CONFIG, version="v2")
        assert len(first.interrupts) == 2
        for tool_call_id in ("c1", "c3"):
            request = lc_gate.store.find_request("t1", tool_call_id)
            assert request is not None
            sqlite_store.decide(request.id, Approve(), actor="alice")
        return await aresume_when_decided(agent, CONFIG, middleware)

    done = asyncio.run(scenario())
    assert done.interrupts == ()
    assert sorted(row["tool"] for row in ledger.runs()) == ["delete_file", "read_data", "send_email"]


def test_a_trusted_resume_decision_is_applied_and_a_disallowed_one_refused(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    lc_gate = Gate(sqlite_store)  # local: over a server, an agent's token may not decide
    ledger = Ledger(tmp_path / "l")
    model = script(calls(("delete_file", {"path": "/tmp/report"}, "c3")), "done")
    agent = agent_with(per_call(lc_gate, accept_resume_decisions=True, actor="app-ui"), model, ledger)
    (pause,) = agent.invoke(ASK, CONFIG, version="v2").interrupts
    with pytest.raises(ValidationError, match="allowed"):
        agent.invoke(Command(resume={pause.id: {"type": "respond", "message": "no"}}), CONFIG, version="v2")
    request = lc_gate.store.find_request("t1", "c3")
    assert request is not None and request.status is RequestStatus.PENDING
    (still,) = agent.get_state(CONFIG).interrupts  # the refused value was not saved: answer again
    done = agent.invoke(Command(resume={still.id: {"type": "approve"}}), CONFIG, version="v2")
    assert done.interrupts == ()
    decided = lc_gate.store.get_request(request.id)
    assert decided.decision is not None and decided.decision.actor == "app-ui"
    assert [row["key"] for row in ledger.runs()] == [request.id]


def test_without_trust_a_resume_decision_approves_nothing(
    tmp_path: Path, sqlite_store: SQLiteStore, lc_gate: Gate
) -> None:
    ledger = Ledger(tmp_path / "l")
    agent = agent_with(per_call(lc_gate), script(calls(("send_email", EMAIL, "c1")), "done"), ledger)
    (pause,) = agent.invoke(ASK, CONFIG, version="v2").interrupts
    again = agent.invoke(Command(resume={pause.id: {"type": "approve"}}), CONFIG, version="v2")
    assert [p.value["tool_call_id"] for p in again.interrupts] == ["c1"] and ledger.runs() == []


def test_an_unknown_mode_is_refused(lc_gate: Gate) -> None:
    with pytest.raises(ValueError, match="'batched' or 'per_call'"):
        SignoffMiddleware(gate=lc_gate, interrupt_mode="per_turn")
