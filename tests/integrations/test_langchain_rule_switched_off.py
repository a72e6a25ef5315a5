"""A call decided while the run was stopped keeps its decision when the run resumes, even if its
rule was switched off meanwhile: a reject stays a reject, an edit runs the person's args, once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from signoff import Decision, Edit, Gate, Reject
from signoff.integrations.langchain import SignoffMiddleware
from signoff.store import SQLiteStore

from .lc_support import Ledger, calls, make_tools, script, tool_messages

CONFIG: Any = {"configurable": {"thread_id": "t1"}}
ASK = {"messages": [{"role": "user", "content": "mail alice"}]}
EMAIL = {"to": "alice", "body": "hi"}


@pytest.mark.parametrize("mode", ["batched", "per_call"])
@pytest.mark.parametrize(
    ("decision", "status", "runs"),
    [(Reject(message="not now"), "error", []), (Edit(args={"to": "bob", "body": "hi"}), "success", ["bob"])],
    ids=["reject", "edit"],
)
def test_a_decision_outlives_its_rule(
    tmp_path: Path, sqlite_store: SQLiteStore, mode: str, decision: Decision, status: str, runs: list[str]
) -> None:
    sqlite_store.set_layer("tool", "send_email", {"requires_approval": True}, actor="admin")
    ledger = Ledger(tmp_path / "l")
    model = script(calls(("send_email", EMAIL, "c1"), ("read_data", {"table": "t"}, "c2")), "done")
    middleware = SignoffMiddleware(gate=Gate(sqlite_store, rules_refresh=0.0), interrupt_mode=mode)
    agent = create_agent(
        model, tools=make_tools(ledger), middleware=[middleware], checkpointer=InMemorySaver()
    )
    assert len(agent.invoke(ASK, CONFIG, version="v2").interrupts) == 1
    request = sqlite_store.find_request("t1", "c1")
    assert request is not None

    sqlite_store.decide(request.id, decision, actor="alice")
    sqlite_store.set_layer("tool", "send_email", {"requires_approval": False}, actor="admin")  # HITL off
    done = agent.invoke(Command(resume=True), CONFIG, version="v2")

    assert done.interrupts == ()
    (answer,) = [m for m in tool_messages(model.seen[1]) if m["tool_call_id"] == "c1"]
    assert answer["status"] == status
    if status == "error":
        assert "not now" in answer["content"]
    assert [row["args"]["to"] for row in ledger.runs("send_email")] == runs
    assert [row["key"] for row in ledger.runs("send_email")] == [request.id] * len(runs)
    assert len(ledger.runs("read_data")) == 1
