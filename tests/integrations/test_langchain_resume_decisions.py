"""A stock `{"decisions": [...]}` resume value from the app's own UI: applied in signoff as the
configured actor's decisions when the middleware is told to trust it (and checked against the
rule first), ignored otherwise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain")

import pydantic
from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from signoff import Gate, RequestStatus, RuleSet, ToolEntry
from signoff.integrations.langchain import SignoffMiddleware
from signoff.store import SQLiteStore

from .lc_support import Ledger, ScriptedModel, calls, make_tools, script, shown, tool_messages
from .test_langchain_parity import DECISIONS, one_call, stock_run

CONFIG: Any = {"configurable": {"thread_id": "t1"}}
ASK = {"messages": [{"role": "user", "content": "mail alice"}]}
INTERRUPT_ON: Any = {"send_email": True, "delete_file": {"allowed_decisions": ["approve", "reject"]}}


def trusting(gate: Gate, **options: Any) -> SignoffMiddleware:
    return SignoffMiddleware(
        interrupt_on=INTERRUPT_ON, gate=gate, accept_resume_decisions=True, actor="alice", **options
    )


def agent_with(middleware: SignoffMiddleware, model: ScriptedModel, ledger: Ledger) -> Any:
    return create_agent(
        model, tools=make_tools(ledger), middleware=[middleware], checkpointer=InMemorySaver()
    )


def two_calls() -> ScriptedModel:
    return script(
        calls(
            ("send_email", {"to": "alice", "body": "hi"}, "c1"),
            ("delete_file", {"path": "/tmp/report"}, "c2"),
        ),
        "done",
    )


@pytest.mark.parametrize("name", DECISIONS)
def test_a_trusted_stock_decision_is_recorded_in_signoff_and_gives_the_stock_messages(
    tmp_path: Path, sqlite_store: SQLiteStore, name: str
) -> None:
    stock_decision, decision, runs = DECISIONS[name]
    stock_model, _ = stock_run(tmp_path, stock_decision)
    ledger = Ledger(tmp_path / "signoff.jsonl")
    model = one_call()
    agent = agent_with(trusting(Gate(sqlite_store)), model, ledger)
    agent.invoke(ASK, CONFIG, version="v2")

    result = agent.invoke(Command(resume={"decisions": [stock_decision]}), CONFIG, version="v2")

    assert result.interrupts == ()
    assert shown(model.seen[1]) == shown(stock_model.seen[1])
    assert tool_messages(model.seen[1]) == tool_messages(stock_model.seen[1])
    assert len(ledger.runs("send_email")) == runs
    request = sqlite_store.find_request("t1", "c1")
    assert request is not None and request.decision is not None
    assert (request.decision.decision, request.decision.actor, request.decision.channel) == (
        decision,
        "alice",
        "langchain",
    )


def test_the_interrupt_id_form_is_applied_too(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    ledger = Ledger(tmp_path / "signoff.jsonl")
    model = two_calls()
    agent = agent_with(trusting(Gate(sqlite_store)), model, ledger)
    (pause,) = agent.invoke(ASK, CONFIG, version="v2").interrupts

    value = {"decisions": [{"type": "approve"}, {"type": "reject", "message": "keep it"}]}
    agent.invoke(Command(resume={pause.id: value}), CONFIG, version="v2")

    assert [m["content"] for m in tool_messages(model.seen[1])] == [
        "User rejected the tool call for `delete_file` with reason: keep it",
        "sent to alice",
    ]
    assert [run["tool"] for run in ledger.runs()] == ["send_email"]
    statuses = [r.status for r in sqlite_store.list_requests(thread_id="t1")]
    assert sorted(statuses) == [RequestStatus.APPROVED, RequestStatus.REJECTED]


def test_without_the_flag_a_stock_decision_approves_nothing(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    ledger = Ledger(tmp_path / "signoff.jsonl")
    model = one_call()
    agent = agent_with(SignoffMiddleware(interrupt_on=INTERRUPT_ON, gate=Gate(sqlite_store)), model, ledger)
    agent.invoke(ASK, CONFIG, version="v2")

    again = agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), CONFIG, version="v2")

    (pause,) = again.interrupts
    assert [a["name"] for a in pause.value["action_requests"]] == ["send_email"]
    request = sqlite_store.find_request("t1", "c1")
    assert request is not None and request.status is RequestStatus.PENDING and request.decision is None
    assert ledger.runs() == [] and len(model.seen) == 1


BAD_VALUES: dict[str, tuple[list[dict[str, Any]], str]] = {
    "too few": ([{"type": "approve"}], r"Number of human decisions \(1\) does not match .* \(2\)"),
    "unknown type": ([{"type": "approve"}, {"type": "maybe"}], "decision 1 .*decision type must be one of"),
    "edit breaking the schema": (
        [{"type": "edit", "edited_action": {"name": "send_email", "args": {"to": 3}}}, {"type": "approve"}],
        "decision 0 \\(send_email, c1\\).*the arguments do not match the schema: body is required",
    ),
    "disallowed type": (
        [{"type": "approve"}, {"type": "respond", "message": "gone"}],
        "decision 1 \\(delete_file, c2\\).*'respond' is not allowed for this request",
    ),
    "edit changing the tool": (
        [
            {"type": "edit", "edited_action": {"name": "read_data", "args": {"table": "t"}}},
            {"type": "approve"},
        ],
        "an edit cannot change the tool",
    ),
}


@pytest.mark.parametrize("name", BAD_VALUES)
def test_a_value_that_does_not_fit_is_refused_decides_nothing_and_the_thread_stays_answerable(
    tmp_path: Path, sqlite_store: SQLiteStore, name: str
) -> None:
    decisions, problem = BAD_VALUES[name]
    ledger = Ledger(tmp_path / "signoff.jsonl")
    model = two_calls()
    agent = agent_with(trusting(Gate(sqlite_store)), model, ledger)
    agent.invoke(ASK, CONFIG, version="v2")

    with pytest.raises(pydantic.ValidationError, match=problem):
        agent.invoke(Command(resume={"decisions": decisions}), CONFIG, version="v2")

    requests = sqlite_store.list_requests(thread_id="t1")
    assert [r.status for r in requests] == [RequestStatus.PENDING, RequestStatus.PENDING]
    assert ledger.runs() == [] and len(model.seen) == 1
    # the refused value was not saved: the same interrupt takes a good one
    good = {"decisions": [{"type": "approve"}, {"type": "approve"}]}
    assert agent.invoke(Command(resume=good), CONFIG, version="v2").interrupts == ()
    assert sorted(run["tool"] for run in ledger.runs()) == ["delete_file", "send_email"]


def test_an_actor_who_is_not_an_approver_is_refused(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    rules = RuleSet(tools={"send_email": ToolEntry(requires_approval=True, approvers=["bob"])})
    ledger = Ledger(tmp_path / "signoff.jsonl")
    model = one_call()
    agent = agent_with(trusting(Gate(sqlite_store, rules=rules)), model, ledger)
    agent.invoke(ASK, CONFIG, version="v2")

    with pytest.raises(pydantic.ValidationError, match="alice is not an approver"):
        agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), CONFIG, version="v2")

    request = sqlite_store.find_request("t1", "c1")
    assert request is not None and request.status is RequestStatus.PENDING
    assert ledger.runs() == []


def test_trusting_resume_values_needs_an_actor(sqlite_store: SQLiteStore) -> None:
    with pytest.raises(ValueError, match="needs actor="):
        SignoffMiddleware(interrupt_on=INTERRUPT_ON, gate=Gate(sqlite_store), accept_resume_decisions=True)
