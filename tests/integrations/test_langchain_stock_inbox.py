"""signoff's inbox for the stock HumanInTheLoopMiddleware: its interrupt's calls become signoff
requests, and signoff's decisions come back as the stock resume value, in order and checked."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langgraph.checkpoint.memory import InMemorySaver

from signoff import Approve, Gate, Reject, RequestNotReady, RequestStatus, Respond, RuleSet, ToolEntry
from signoff.integrations.langchain import open_stock_requests, resume_stock_when_decided, stock_resume
from signoff.store import SQLiteStore

from .lc_support import Ledger, ScriptedModel, calls, make_tools, script, shown, tool_messages
from .test_langchain_parity import DECISIONS, one_call, stock_run

CONFIG: Any = {"configurable": {"thread_id": "t1"}}
ASK = {"messages": [{"role": "user", "content": "mail alice"}]}
INTERRUPT_ON: Any = {
    "send_email": True,
    "delete_file": {
        "allowed_decisions": ["approve", "reject"],
        "when": lambda request: request.tool_call["args"]["path"].startswith("/etc"),
    },
    "read_data": False,
}


def stock_agent(model: ScriptedModel, ledger: Ledger) -> Any:
    return create_agent(
        model,
        tools=make_tools(ledger),
        middleware=[HumanInTheLoopMiddleware(interrupt_on=INTERRUPT_ON)],
        checkpointer=InMemorySaver(),
    )


@pytest.mark.parametrize("name", DECISIONS)
def test_signoffs_decision_is_sent_as_the_stock_decision(
    tmp_path: Path, sqlite_store: SQLiteStore, name: str
) -> None:
    stock_decision, decision, runs = DECISIONS[name]
    direct_model, _ = stock_run(tmp_path, stock_decision)  # the app's own UI sending it
    ledger = Ledger(tmp_path / "inbox.jsonl")
    model = one_call()
    agent = stock_agent(model, ledger)
    (pause,) = agent.invoke(ASK, CONFIG, version="v2").interrupts
    gate = Gate(sqlite_store)

    review = open_stock_requests(agent, CONFIG, gate)
    (request,) = review.requests
    assert (request.tool_call_id, request.tool_name, request.args) == (
        "c1",
        "send_email",
        {"to": "alice", "body": "hi"},
    )
    assert request.tool_description == pause.value["action_requests"][0]["description"]
    sqlite_store.decide(request.id, decision, actor="alice")
    command = stock_resume(agent, CONFIG, gate)

    assert command.resume == {pause.id: {"decisions": [stock_decision]}}
    agent.invoke(command, CONFIG, version="v2")
    assert shown(model.seen[1]) == shown(direct_model.seen[1])
    assert tool_messages(model.seen[1]) == tool_messages(direct_model.seen[1])
    assert len(ledger.runs("send_email")) == runs


def mixed_turn() -> ScriptedModel:
    return script(
        calls(
            ("delete_file", {"path": "/tmp/x"}, "c1"),  # `when` says no: not gated
            ("send_email", {"to": "alice", "body": "hi"}, "c2"),
            ("read_data", {"table": "users"}, "c3"),  # not gated
            ("delete_file", {"path": "/etc/passwd"}, "c4"),
        ),
        "done",
    )


def test_gated_calls_are_matched_by_position_and_partly_decided_sends_nothing(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    ledger = Ledger(tmp_path / "inbox.jsonl")
    model = mixed_turn()
    agent = stock_agent(model, ledger)
    (pause,) = agent.invoke(ASK, CONFIG, version="v2").interrupts
    gate = Gate(sqlite_store)

    first = open_stock_requests(agent, CONFIG, gate)
    again = open_stock_requests(agent, CONFIG, gate)  # idempotent: finds the same requests
    assert [r.tool_call_id for r in first.requests] == ["c2", "c4"]
    assert [r.id for r in again.requests] == [r.id for r in first.requests]
    assert len(sqlite_store.list_requests(thread_id="t1")) == 2
    assert first.requests[1].rule.allowed_decisions == ("approve", "reject")

    sqlite_store.decide(first.requests[1].id, Reject(message="not /etc"), actor="alice")
    with pytest.raises(RequestNotReady, match=r"1 of 2 calls are still undecided: .*\(send_email, c2\)"):
        stock_resume(agent, CONFIG, gate)
    assert agent.get_state(CONFIG).interrupts[0].id == pause.id  # still waiting, nothing sent
    assert ledger.runs() == [] and len(model.seen) == 1

    sqlite_store.decide(first.requests[0].id, Approve(), actor="alice")
    command = stock_resume(agent, CONFIG, gate)
    assert command.resume == {
        pause.id: {"decisions": [{"type": "approve"}, {"type": "reject", "message": "not /etc"}]}
    }
    agent.invoke(command, CONFIG, version="v2")
    assert [(m["tool_call_id"], m["content"]) for m in tool_messages(model.seen[1])] == [
        ("c4", "User rejected the tool call for `delete_file` with reason: not /etc"),
        ("c1", "deleted /tmp/x"),
        ("c2", "sent to alice"),
        ("c3", "rows of users"),
    ]
    assert sorted(run["tool"] for run in ledger.runs()) == ["delete_file", "read_data", "send_email"]


def test_a_decision_the_stock_config_does_not_allow_is_never_sent(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    # the store's own rule lets a person respond for delete_file; the stock middleware does not
    rules = RuleSet(tools={"delete_file": ToolEntry(requires_approval=True, allowed_decisions=["respond"])})
    gate = Gate(sqlite_store, rules=rules)
    model = script(calls(("delete_file", {"path": "/etc/x"}, "c1")), "done")
    agent = stock_agent(model, Ledger(tmp_path / "inbox.jsonl"))
    agent.invoke(ASK, CONFIG, version="v2")
    (request,) = open_stock_requests(agent, CONFIG, gate).requests
    sqlite_store.decide(request.id, Respond(message="it is gone"), actor="alice")

    with pytest.raises(
        ValueError, match=r"'respond' is not one the stock middleware allows .*approve, reject"
    ):
        stock_resume(agent, CONFIG, gate)
    assert agent.get_state(CONFIG).interrupts  # the thread still waits, unharmed
    assert len(model.seen) == 1


def test_the_helper_waits_for_the_decisions_then_resumes(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    ledger = Ledger(tmp_path / "inbox.jsonl")
    model = mixed_turn()
    agent = stock_agent(model, ledger)
    agent.invoke(ASK, CONFIG, version="v2")
    gate = Gate(sqlite_store)

    def person() -> None:
        while len(requests := sqlite_store.list_requests(thread_id="t1", status=RequestStatus.PENDING)) < 2:
            threading.Event().wait(0.01)
        for request in requests:
            sqlite_store.decide(request.id, Approve(), actor="alice")

    deciding = threading.Thread(target=person, daemon=True)
    deciding.start()
    result = resume_stock_when_decided(agent, CONFIG, gate)
    deciding.join()

    assert result.interrupts == ()
    assert sorted(run["tool"] for run in ledger.runs()) == [
        "delete_file",
        "delete_file",
        "read_data",
        "send_email",
    ]
