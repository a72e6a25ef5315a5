"""SignoffMiddleware's durable mode: several calls in one turn decided in any order, decisions
the rule does not allow, deadlines, the resume helper and replays that run nothing twice."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from signoff import Approve, Backend, DecisionNotAllowed, Defaults, Edit, Gate, Reject, RequestStatus, RuleSet
from signoff.integrations.langchain import SignoffMiddleware, resume_when_decided
from signoff.store import SQLiteStore

from .lc_support import Ledger, ScriptedModel, calls, make_tools, script, shown, tool_messages

CONFIG: Any = {"configurable": {"thread_id": "t1"}}
ASK = {"messages": [{"role": "user", "content": "tidy up"}]}
INTERRUPT_ON: Any = {
    "send_email": True,
    "delete_file": {"allowed_decisions": ["approve", "reject"]},
    "read_data": False,
}


def three_calls() -> ScriptedModel:
    return script(
        calls(
            ("send_email", {"to": "alice", "body": "hi"}, "c1"),
            ("read_data", {"table": "users"}, "c2"),
            ("delete_file", {"path": "/tmp/report"}, "c3"),
        ),
        "done",
    )


def agent_with(middleware: Any, model: ScriptedModel, ledger: Ledger) -> Any:
    return create_agent(
        model, tools=make_tools(ledger), middleware=[middleware], checkpointer=InMemorySaver()
    )


def request_id(store: Backend, tool_call_id: str) -> str:
    request = store.find_request("t1", tool_call_id)
    assert request is not None
    return request.id


def test_several_calls_in_one_turn_decided_in_any_order(
    tmp_path: Path, sqlite_store: SQLiteStore, lc_gate: Gate
) -> None:
    stock_model = three_calls()
    stock = agent_with(
        HumanInTheLoopMiddleware(interrupt_on=INTERRUPT_ON), stock_model, Ledger(tmp_path / "s")
    )
    stock.invoke(ASK, CONFIG, version="v2")
    stock.invoke(
        Command(resume={"decisions": [{"type": "approve"}, {"type": "reject", "message": "keep it"}]}),
        CONFIG,
        version="v2",
    )

    ledger = Ledger(tmp_path / "signoff")
    model = three_calls()
    agent = agent_with(SignoffMiddleware(interrupt_on=INTERRUPT_ON, gate=lc_gate), model, ledger)
    first = agent.invoke(ASK, CONFIG, version="v2")
    assert [a["name"] for a in first.interrupts[0].value["action_requests"]] == ["send_email", "delete_file"]
    assert first.interrupts[0].value["review_configs"][1]["allowed_decisions"] == ["approve", "reject"]

    # the later call is decided first; resuming then stops again, on the one still undecided
    sqlite_store.decide(request_id(lc_gate.store, "c3"), Reject(message="keep it"), actor="alice")
    second = agent.invoke(Command(resume=True), CONFIG, version="v2")
    assert [a["name"] for a in second.interrupts[0].value["action_requests"]] == ["send_email"]
    assert ledger.runs() == [] and len(model.seen) == 1

    sqlite_store.decide(request_id(lc_gate.store, "c1"), Approve(), actor="alice")
    agent.invoke(Command(resume=True), CONFIG, version="v2")

    assert shown(model.seen[1]) == shown(stock_model.seen[1])
    assert tool_messages(model.seen[1]) == tool_messages(stock_model.seen[1])
    # the tools node runs a turn's calls in parallel, so in no fixed order
    ran = sorted((run["tool"], run["key"]) for run in ledger.runs())
    assert ran == [("read_data", None), ("send_email", request_id(lc_gate.store, "c1"))]


def test_a_decision_the_rule_does_not_allow_is_refused_and_the_call_stays_pending(
    tmp_path: Path, sqlite_store: SQLiteStore, lc_gate: Gate
) -> None:
    ledger = Ledger(tmp_path / "signoff")
    model = script(calls(("delete_file", {"path": "/etc"}, "c3")), "done")
    agent = agent_with(SignoffMiddleware(interrupt_on=INTERRUPT_ON, gate=lc_gate), model, ledger)
    agent.invoke(ASK, CONFIG, version="v2")

    with pytest.raises(DecisionNotAllowed, match="edit"):
        sqlite_store.decide(request_id(lc_gate.store, "c3"), Edit(args={"path": "/tmp"}), actor="alice")
    assert sqlite_store.get_request(request_id(lc_gate.store, "c3")).status is RequestStatus.PENDING
    again = agent.invoke(Command(resume=True), CONFIG, version="v2")
    assert again.interrupts[0].value["action_requests"][0]["args"] == {"path": "/etc"}
    assert ledger.runs() == [] and len(model.seen) == 1


def test_a_replay_of_the_tools_node_runs_nothing_again(
    tmp_path: Path, sqlite_store: SQLiteStore, lc_gate: Gate
) -> None:
    ledger = Ledger(tmp_path / "signoff")
    model = script(calls(("send_email", {"to": "alice", "body": "hi"}, "c1")), "done", "done again")
    agent = agent_with(SignoffMiddleware(interrupt_on=INTERRUPT_ON, gate=lc_gate), model, ledger)
    agent.invoke(ASK, CONFIG, version="v2")
    sqlite_store.decide(request_id(lc_gate.store, "c1"), Approve(), actor="alice")
    agent.invoke(Command(resume=True), CONFIG, version="v2")
    assert len(ledger.runs()) == 1

    before_tools = next(s for s in agent.get_state_history(CONFIG) if s.next == ("tools",))
    agent.invoke(None, before_tools.config, version="v2")

    assert len(ledger.runs()) == 1
    assert tool_messages(model.seen[2]) == tool_messages(model.seen[1])
    assert tool_messages(model.seen[2])[0]["content"] == "sent to alice"
    assert [r.tool_call_id for r in lc_gate.store.list_requests(thread_id="t1")] == ["c1"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("on_expire", "runs", "content"),
    [
        ("reject", 0, "The approval request expired."),
        ("approve", 1, "sent to alice"),
    ],
)
def test_a_request_past_its_deadline_resumes_with_the_on_expire_outcome(
    tmp_path: Path, sqlite_store: SQLiteStore, on_expire: str, runs: int, content: str
) -> None:
    rules = RuleSet(defaults=Defaults.model_validate({"deadline": "1s", "on_expire": on_expire}))
    middleware = SignoffMiddleware(interrupt_on=INTERRUPT_ON, gate=Gate(sqlite_store, rules=rules))
    ledger = Ledger(tmp_path / "signoff")
    model = script(calls(("send_email", {"to": "alice", "body": "hi"}, "c1")), "done")
    agent = agent_with(middleware, model, ledger)
    assert agent.invoke(ASK, CONFIG, version="v2").interrupts

    result = resume_when_decided(agent, CONFIG, middleware)  # nobody decides: waits for the deadline

    assert result.interrupts == ()
    assert sqlite_store.get_request(request_id(sqlite_store, "c1")).status is RequestStatus.EXPIRED
    (message,) = tool_messages(model.seen[1])
    assert message["content"] == content
    assert message["status"] == ("error" if on_expire == "reject" else "success")
    assert len(ledger.runs()) == runs


def test_the_resume_helper_waits_for_the_person_then_resumes(
    tmp_path: Path, sqlite_store: SQLiteStore, lc_gate: Gate
) -> None:
    middleware = SignoffMiddleware(interrupt_on=INTERRUPT_ON, gate=lc_gate)
    ledger = Ledger(tmp_path / "signoff")
    model = script(calls(("delete_file", {"path": "/tmp/x"}, "c3")), "done")
    agent = agent_with(middleware, model, ledger)
    agent.invoke(ASK, CONFIG, version="v2")
    person = threading.Timer(
        0.05, lambda: sqlite_store.decide(request_id(lc_gate.store, "c3"), Approve(), actor="alice")
    )
    person.start()

    result = resume_when_decided(agent, CONFIG, middleware)
    person.join()

    assert result.interrupts == ()
    assert tool_messages(model.seen[1])[0]["content"] == "deleted /tmp/x"
    assert ledger.runs() == [
        {"tool": "delete_file", "args": {"path": "/tmp/x"}, "key": request_id(lc_gate.store, "c3")}
    ]
