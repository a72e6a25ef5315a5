"""Pydantic AI through signoff's rules, durable mode in one process: each decision gives the model
exactly these parts next, and the tool runs exactly this often (never twice per request)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied

from signoff import (
    Approve,
    DecisionNotAllowed,
    Edit,
    Gate,
    Reject,
    RequestStatus,
    Respond,
    RuleSet,
    ToolEntry,
)
from signoff.integrations.pydantic_ai import decided_results, pending_requests, signoff_approval
from signoff.store import SQLiteStore

from .pai_support import (
    Ledger,
    Script,
    close_run_sync_loop,  # noqa: F401 (an autouse fixture)
    make_toolset,
)

RULES = RuleSet(
    tools={
        "send_email": ToolEntry(requires_approval=True),
        "delete_file": ToolEntry(requires_approval=True, allowed_decisions=["approve", "reject"]),
    }
)
MAIL = ("send_email", {"to": "alice", "body": "hi"}, "c1")
READ = ("read_data", {"table": "users"}, "c2")
DELETE = ("delete_file", {"path": "/tmp/report"}, "c3")


def agent_for(script: Script, toolset: Any) -> Agent[None, str | DeferredToolRequests]:
    return Agent(script.model, toolsets=[toolset], output_type=[str, DeferredToolRequests])


def start(store: SQLiteStore, ledger: Ledger, *turns: Any) -> tuple[Any, Script, Any]:
    script = Script(list(turns))
    toolset = signoff_approval(make_toolset(ledger), Gate(store, rules=RULES))
    result = agent_for(script, toolset).run_sync("tidy up", conversation_id="t1")
    return toolset, script, result


def request_id(store: SQLiteStore, tool_call_id: str) -> str:
    request = store.find_request("t1", tool_call_id)
    assert request is not None
    return request.id


def resume(toolset: Any, script: Script, result: Any) -> Any:
    blob = result.all_messages_json()
    results = decided_results(toolset, blob)
    assert results is not None
    history = ModelMessagesTypeAdapter.validate_json(blob)
    return agent_for(script, toolset).run_sync(message_history=history, deferred_tool_results=results)


def test_only_the_calls_the_rules_gate_are_deferred_and_the_others_run_at_once(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    ledger = Ledger(tmp_path / "ledger")
    _, script, result = start(sqlite_store, ledger, [MAIL, READ, DELETE], "done")

    assert isinstance(result.output, DeferredToolRequests)
    assert sorted(call.tool_call_id for call in result.output.approvals) == ["c1", "c3"]
    assert result.output.metadata["c1"]["signoff"]["request_id"] == request_id(sqlite_store, "c1")
    assert [run["tool"] for run in ledger.runs()] == ["read_data"]
    assert sorted(r.tool_call_id for r in sqlite_store.list_requests(thread_id="t1")) == ["c1", "c3"]
    assert len(script.seen) == 1


def test_approve_runs_the_tool_once_under_the_requests_key(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    ledger = Ledger(tmp_path / "ledger")
    toolset, script, result = start(sqlite_store, ledger, [MAIL], "done")
    sqlite_store.decide(request_id(sqlite_store, "c1"), Approve(), actor="alice")

    results = decided_results(toolset, result.all_messages_json())
    assert results is not None and results.approvals == {"c1": ToolApproved()}
    assert results.answered_by == {"c1": "alice"}
    final = resume(toolset, script, result)

    assert final.output == "done"
    assert script.shown(1) == [("tool-return", "send_email", "c1", "sent to alice", "success")]
    assert ledger.runs() == [
        {"tool": "send_email", "args": {"to": "alice", "body": "hi"}, "key": request_id(sqlite_store, "c1")}
    ]


def test_edit_runs_the_persons_args_and_tells_the_model(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    ledger = Ledger(tmp_path / "ledger")
    toolset, script, result = start(sqlite_store, ledger, [MAIL], "done")
    sqlite_store.decide(request_id(sqlite_store, "c1"), Edit(args={"to": "bob", "body": "hi"}), actor="alice")

    results = decided_results(toolset, result.all_messages_json())
    assert results is not None
    assert results.approvals == {"c1": ToolApproved(override_args={"to": "bob", "body": "hi"})}
    resume(toolset, script, result)

    assert script.shown(1) == [
        (
            "tool-return",
            "send_email",
            "c1",
            "The parameters for tool 'send_email' were updated by the user to:\n"
            '{"to": "bob", "body": "hi"}\n\nsent to bob',
            "success",
        )
    ]
    assert [run["args"] for run in ledger.runs()] == [{"to": "bob", "body": "hi"}]


def test_reject_with_feedback_denies_the_call_with_the_reason(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    ledger = Ledger(tmp_path / "ledger")
    toolset, script, result = start(sqlite_store, ledger, [MAIL], "done")
    sqlite_store.decide(request_id(sqlite_store, "c1"), Reject(message="not on a Sunday"), actor="alice")

    results = decided_results(toolset, result.all_messages_json())
    text = "Tool execution for 'send_email' was rejected by the user. With user feedback: not on a Sunday"
    assert results is not None and results.approvals == {"c1": ToolDenied(text)}
    resume(toolset, script, result)

    assert script.shown(1) == [("tool-return", "send_email", "c1", text, "denied")]
    assert ledger.runs() == []


def test_respond_gives_the_persons_answer_as_the_result(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    ledger = Ledger(tmp_path / "ledger")
    toolset, script, result = start(sqlite_store, ledger, [MAIL], "done")
    sqlite_store.decide(request_id(sqlite_store, "c1"), Respond(message="alice is on leave"), actor="alice")

    results = decided_results(toolset, result.all_messages_json())
    assert results is not None and results.calls == {"c1": "alice is on leave"} and results.approvals == {}
    resume(toolset, script, result)

    assert script.shown(1) == [("tool-return", "send_email", "c1", "alice is on leave", "success")]
    assert ledger.runs() == []


def test_a_decision_the_rule_does_not_allow_is_refused_and_the_call_stays_pending(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    ledger = Ledger(tmp_path / "ledger")
    toolset, _, result = start(sqlite_store, ledger, [DELETE], "done")

    with pytest.raises(DecisionNotAllowed, match="edit"):
        sqlite_store.decide(request_id(sqlite_store, "c3"), Edit(args={"path": "/etc"}), actor="alice")

    assert sqlite_store.get_request(request_id(sqlite_store, "c3")).status is RequestStatus.PENDING
    assert decided_results(toolset, result.all_messages_json()) is None
    assert [r.tool_call_id for r in pending_requests(toolset, result.all_messages_json())] == ["c3"]
    assert ledger.runs() == []


def test_a_caller_approving_a_call_signoff_has_not_decided_defers_it_again(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    ledger = Ledger(tmp_path / "ledger")
    toolset, script, result = start(sqlite_store, ledger, [MAIL], "done")
    blob = result.all_messages_json()
    again = agent_for(script, toolset).run_sync(
        message_history=ModelMessagesTypeAdapter.validate_json(blob),
        deferred_tool_results=DeferredToolResults(
            approvals={"c1": ToolApproved(override_args={"to": "eve", "body": "x"})}
        ),
    )

    assert isinstance(again.output, DeferredToolRequests)
    assert [call.tool_call_id for call in again.output.approvals] == ["c1"]
    assert ledger.runs() == [] and len(script.seen) == 1


def test_replaying_a_resume_runs_nothing_twice(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    ledger = Ledger(tmp_path / "ledger")
    toolset, script, result = start(sqlite_store, ledger, [MAIL], "done", "done again")
    sqlite_store.decide(request_id(sqlite_store, "c1"), Edit(args={"to": "bob", "body": "hi"}), actor="alice")
    resume(toolset, script, result)
    resume(toolset, script, result)  # the same saved history and decisions, once more

    assert script.shown(2) == script.shown(1)
    assert len(ledger.runs()) == 1
    assert [r.tool_call_id for r in sqlite_store.list_requests(thread_id="t1")] == ["c1"]


def test_a_call_nothing_asks_about_needs_no_thread_and_a_rule_switched_on_asks_at_once(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    ledger = Ledger(tmp_path / "ledger")
    toolset = signoff_approval(make_toolset(ledger), Gate(sqlite_store, rules_refresh=0.0))
    script = Script([[READ], "done"])
    result = agent_for(script, toolset).run_sync("tidy up")  # no conversation_id: nothing asks
    assert result.output == "done" and [run["tool"] for run in ledger.runs()] == ["read_data"]

    sqlite_store.set_layer("tool", "read_data", {"requires_approval": True}, actor="admin")
    script = Script([[READ], "done"])
    result = agent_for(script, toolset).run_sync("tidy up", conversation_id="t1")
    assert isinstance(result.output, DeferredToolRequests)
    assert [call.tool_call_id for call in result.output.approvals] == ["c2"]
    assert len(ledger.runs()) == 1 and sqlite_store.find_request("t1", "c2") is not None


@pytest.mark.parametrize("decision", [Reject(message="not now"), Edit(args={"to": "bob", "body": "hi"})])
def test_a_decision_outlives_its_rule_switched_off_before_the_resume(
    tmp_path: Path, sqlite_store: SQLiteStore, decision: Any
) -> None:
    sqlite_store.set_layer("tool", "send_email", {"requires_approval": True}, actor="admin")
    ledger = Ledger(tmp_path / "ledger")
    script = Script([[MAIL], "done"])
    toolset = signoff_approval(make_toolset(ledger), Gate(sqlite_store, rules_refresh=0.0))
    result = agent_for(script, toolset).run_sync("tidy up", conversation_id="t1")
    assert isinstance(result.output, DeferredToolRequests)
    request = request_id(sqlite_store, "c1")
    sqlite_store.decide(request, decision, actor="alice")
    sqlite_store.set_layer("tool", "send_email", {"requires_approval": False}, actor="admin")  # HITL off

    final = resume(toolset, script, result)
    assert final.output == "done"
    (shown,) = script.shown(1)
    if isinstance(decision, Reject):
        assert shown[-1] == "denied" and "not now" in shown[3] and ledger.runs() == []
    else:
        assert ledger.runs() == [{"tool": "send_email", "args": {"to": "bob", "body": "hi"}, "key": request}]
