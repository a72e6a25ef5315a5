"""SignoffMiddleware gives the model exactly what HumanInTheLoopMiddleware gives it for the same
decisions (the stock middleware run with Command(resume={"decisions": [...]})), in its durable
and its waiting mode, and runs each tool at most once."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from signoff import Approve, Decision, Edit, Gate, Reject, Respond
from signoff.integrations.langchain import SignoffMiddleware
from signoff.store import SQLiteStore

from .lc_support import Ledger, ScriptedModel, calls, make_tools, script, shown, tool_messages

CONFIG: Any = {"configurable": {"thread_id": "t1"}}
EMAIL = {"to": "alice", "body": "hi"}

# (stock decision, signoff decision, how many times send_email runs)
DECISIONS: dict[str, tuple[dict[str, Any], Decision, int]] = {
    "approve": ({"type": "approve"}, Approve(), 1),
    "edit": (
        {"type": "edit", "edited_action": {"name": "send_email", "args": {"to": "bob", "body": "hi"}}},
        Edit(args={"to": "bob", "body": "hi"}),
        1,
    ),
    "reject with reason": ({"type": "reject", "message": "not now"}, Reject(message="not now"), 0),
    "reject": ({"type": "reject"}, Reject(), 0),
    "respond": ({"type": "respond", "message": "Alice is on leave"}, Respond(message="Alice is on leave"), 0),
}


def one_call() -> ScriptedModel:
    return script(calls(("send_email", EMAIL, "c1")), "done")


def stock_run(tmp_path: Path, decision: dict[str, Any]) -> tuple[ScriptedModel, Ledger]:
    ledger = Ledger(tmp_path / "stock.jsonl")
    model = one_call()
    agent = create_agent(
        model,
        tools=make_tools(ledger),
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"send_email": True})],
        checkpointer=InMemorySaver(),
    )
    agent.invoke({"messages": [{"role": "user", "content": "mail alice"}]}, CONFIG, version="v2")
    agent.invoke(Command(resume={"decisions": [decision]}), CONFIG, version="v2")
    return model, ledger


@pytest.mark.parametrize("name", DECISIONS)
def test_durable_mode_gives_the_stock_messages(
    tmp_path: Path, sqlite_store: SQLiteStore, lc_gate: Gate, name: str
) -> None:
    stock_decision, decision, runs = DECISIONS[name]
    stock_model, stock_ledger = stock_run(tmp_path, stock_decision)

    ledger = Ledger(tmp_path / "signoff.jsonl")
    model = one_call()
    middleware = SignoffMiddleware(interrupt_on={"send_email": True}, gate=lc_gate)
    agent = create_agent(
        model, tools=make_tools(ledger), middleware=[middleware], checkpointer=InMemorySaver()
    )
    paused = agent.invoke({"messages": [{"role": "user", "content": "mail alice"}]}, CONFIG, version="v2")

    (pause,) = paused.interrupts
    assert pause.value["action_requests"][0]["name"] == "send_email"
    assert pause.value["review_configs"] == [
        {"action_name": "send_email", "allowed_decisions": ["approve", "edit", "reject", "respond"]}
    ]
    assert len(model.seen) == 1 and ledger.runs() == []
    request = lc_gate.store.find_request("t1", "c1")
    assert request is not None and pause.value["signoff"]["requests"][0]["request_id"] == request.id
    sqlite_store.decide(request.id, decision, actor="alice")
    agent.invoke(Command(resume=True), CONFIG, version="v2")

    assert shown(model.seen[1]) == shown(stock_model.seen[1])
    assert tool_messages(model.seen[1]) == tool_messages(stock_model.seen[1])
    assert len(model.seen) == 2
    assert len(ledger.runs("send_email")) == len(stock_ledger.runs("send_email")) == runs
    if runs:
        assert ledger.runs()[0]["key"] == request.id  # signoff.idempotency_key() inside the tool


def decide_when_asked(
    gate: Gate, store: SQLiteStore, tool_call_id: str, decision: Decision
) -> threading.Thread:
    """A person who decides as soon as the request shows up (the agent waits meanwhile)."""

    def person() -> None:
        while (request := gate.store.find_request("t1", tool_call_id)) is None:
            threading.Event().wait(0.01)
        store.decide(request.id, decision, actor="alice")

    thread = threading.Thread(target=person, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("name", DECISIONS)
def test_waiting_mode_gives_the_stock_messages(
    tmp_path: Path, sqlite_store: SQLiteStore, lc_gate: Gate, name: str
) -> None:
    stock_decision, decision, runs = DECISIONS[name]
    stock_model, _ = stock_run(tmp_path, stock_decision)

    ledger = Ledger(tmp_path / "signoff.jsonl")
    model = one_call()
    middleware = SignoffMiddleware(interrupt_on={"send_email": True}, gate=lc_gate, wait=True)
    agent = create_agent(
        model, tools=make_tools(ledger), middleware=[middleware], checkpointer=InMemorySaver()
    )
    person = decide_when_asked(lc_gate, sqlite_store, "c1", decision)
    result = agent.invoke({"messages": [{"role": "user", "content": "mail alice"}]}, CONFIG, version="v2")
    person.join()

    assert result.interrupts == ()
    assert shown(model.seen[1]) == shown(stock_model.seen[1])
    assert tool_messages(model.seen[1]) == tool_messages(stock_model.seen[1])
    assert len(ledger.runs("send_email")) == runs


@pytest.mark.parametrize("name", ["edit", "reject with reason", "respond"])
def test_waiting_mode_under_ainvoke(
    tmp_path: Path, sqlite_store: SQLiteStore, lc_gate: Gate, name: str
) -> None:
    stock_decision, decision, runs = DECISIONS[name]
    stock_model, _ = stock_run(tmp_path, stock_decision)

    ledger = Ledger(tmp_path / "signoff.jsonl")
    model = one_call()
    middleware = SignoffMiddleware(interrupt_on={"send_email": True}, gate=lc_gate, wait=True)
    agent = create_agent(
        model, tools=make_tools(ledger), middleware=[middleware], checkpointer=InMemorySaver()
    )
    person = decide_when_asked(lc_gate, sqlite_store, "c1", decision)
    asyncio.run(
        agent.ainvoke({"messages": [{"role": "user", "content": "mail alice"}]}, CONFIG, version="v2")
    )
    person.join()

    assert tool_messages(model.seen[1]) == tool_messages(stock_model.seen[1])
    assert len(ledger.runs("send_email")) == runs
