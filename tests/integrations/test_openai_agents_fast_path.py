"""The Agents SDK adapter's no-approval path: a gated tool whose rules ask about none of its calls
shows the SDK `needs_approval=False` (so the SDK neither parses the args nor awaits a predicate):
anywhere when they ask nobody, inside a `SignoffApproval` run when they ask nobody in its scope;
anything that could make it ask shows the predicate again."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import RunContextWrapper

from signoff import Decision, Edit, Gate, Reject, RuleSet, ToolEntry
from signoff.integrations.openai_agents import SignoffApproval
from signoff.integrations.openai_agents.context import bound_thread
from signoff.integrations.openai_agents.tools import RulesApproval
from signoff.store import SQLiteStore

from .oa_support import USER, Ledger, agent, make_tools, outputs, script


def gated_tools(approval: SignoffApproval, tmp_path: Path) -> tuple[Any, Any]:
    send_email, lookup = approval.gate_tools(make_tools(Ledger(tmp_path / "ledger.jsonl")))
    return send_email, lookup


def test_in_a_run_a_quiet_tool_reads_false_and_a_rule_switched_on_in_the_store_asks_at_once(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    approval = SignoffApproval(Gate(sqlite_store, rules_refresh=0.0))
    send_email, lookup = gated_tools(approval, tmp_path)
    with bound_thread(approval.defaults, "t1", None):
        assert send_email.needs_approval is False and lookup.needs_approval is False
        sqlite_store.set_layer("tool", "send_email", {"requires_approval": True}, actor="admin")
        assert isinstance(send_email.needs_approval, RulesApproval), "the new rule is read at once"
        assert lookup.needs_approval is False
    # outside a SignoffApproval run: False for a tool asked about nowhere, else the predicate
    assert lookup.needs_approval is False
    assert isinstance(send_email.needs_approval, RulesApproval)
    sqlite_store.set_layer("agent", "strict", {"interrupt_on": {"lookup": True}}, actor="admin")
    assert isinstance(lookup.needs_approval, RulesApproval), "asked about for some agent: the predicate"
    with bound_thread(approval.defaults, "t1", None):
        assert lookup.needs_approval is False, "but not for this run's (no) agent"
    sqlite_store.set_layer("agent", "strict", {"interrupt_on": {}}, actor="admin")

    paused = asyncio.run(approval.run(agent(script(), [send_email, lookup]), USER, thread_id="t1"))
    assert [waiting.request.tool_name for waiting in paused.pending] == ["send_email"]
    sqlite_store.set_layer("tool", "send_email", {"requires_approval": False}, actor="admin")
    model = script()
    done = asyncio.run(approval.run(agent(model, [send_email, lookup]), USER, thread_id="t2"))
    assert done.final_output == "done" and outputs(model) == [("c1", "sent to alice"), ("c2", "rows of t")]
    assert sqlite_store.find_request("t2", "c1") is None


def test_the_runs_scope_picks_the_rules_and_a_scope_changed_during_the_run_is_read_per_call(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    rules = RuleSet.model_validate({"agents": {"strict": {"interrupt_on": {"send_email": True}}}})
    approval = SignoffApproval(Gate(sqlite_store, rules=rules))
    send_email, _ = gated_tools(approval, tmp_path)
    context: dict[str, Any] = {"signoff": {"agent": "relaxed"}}
    with bound_thread(approval.defaults, "t1", context):
        assert send_email.needs_approval is False
        context["signoff"]["agent"] = "strict"  # changed in place, mid-run
        predicate = send_email.needs_approval
        assert isinstance(predicate, RulesApproval)
        wrapper: Any = RunContextWrapper(context=context)
        assert asyncio.run(predicate(wrapper, {"to": "a", "body": "b"}, "c1")) is True
    misspelt = {"signoff": {"agnet": "strict"}}
    with bound_thread(approval.defaults, "t2", {"signoff": {"agent": "strict"}}):
        assert isinstance(send_email.needs_approval, RulesApproval)
    with pytest.raises(ValueError, match="unknown keys"):  # refused, not taken for the defaults
        asyncio.run(approval.run(agent(script(), [send_email]), USER, thread_id="t3", context=misspelt))


def test_a_when_on_the_rule_keeps_the_predicate_so_the_args_are_read(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    rules = RuleSet.model_validate(
        {"tools": {"send_email": {"requires_approval": True, "when": "args.to != 'alice'"}}}
    )
    approval = SignoffApproval(Gate(sqlite_store, rules=rules))
    send_email, lookup = gated_tools(approval, tmp_path)
    with bound_thread(approval.defaults, "t1", None):
        assert isinstance(send_email.needs_approval, RulesApproval) and lookup.needs_approval is False
    model = script()
    done = asyncio.run(approval.run(agent(model, [send_email, lookup]), USER, thread_id="t1"))
    assert done.final_output == "done", "the `when` said no for alice: nothing paused"
    assert sqlite_store.find_request("t1", "c1") is None


def test_a_copy_stays_gated_and_a_value_set_later_is_kept(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    approval = SignoffApproval(Gate(sqlite_store, rules=RuleSet()))
    send_email, _ = gated_tools(approval, tmp_path)
    copied = copy.copy(send_email)
    with bound_thread(approval.defaults, "t1", None):
        assert copied.needs_approval is False
        assert approval.gate_tool(copied) is copied, "gating a gated copy changes nothing"
        send_email.needs_approval = True
        assert send_email.needs_approval is True and copied.needs_approval is False
    assert type(send_email).__name__ == "FunctionTool"


@pytest.mark.parametrize(
    ("decision", "sent", "output"),
    [
        (
            Reject(message="not now"),
            [],
            "Tool execution for 'send_email' was rejected by the user. With user feedback: not now",
        ),
        (
            Edit(args={"to": "bob", "body": "hi"}),
            [{"to": "bob", "body": "hi"}],
            "The parameters for tool 'send_email' were updated by the user to:\n"
            '{"to": "bob", "body": "hi"}\n\nsent to bob',
        ),
    ],
    ids=["reject", "edit"],
)
def test_a_decision_outlives_its_rule_switched_off_before_the_resume(
    tmp_path: Path, sqlite_store: SQLiteStore, decision: Decision, sent: list[dict[str, str]], output: str
) -> None:
    sqlite_store.set_layer("tool", "send_email", {"requires_approval": True}, actor="admin")
    approval = SignoffApproval(Gate(sqlite_store, rules_refresh=0.0))
    ledger = Ledger(tmp_path / "ledger.jsonl")
    tools = approval.gate_tools(make_tools(ledger))
    paused = asyncio.run(approval.run(agent(script(), tools), USER, thread_id="t1"))
    (waiting,) = paused.pending
    sqlite_store.decide(waiting.request_id, decision, actor="alice")
    sqlite_store.set_layer("tool", "send_email", {"requires_approval": False}, actor="admin")  # HITL off

    model = script(first=False)
    done = asyncio.run(approval.resume(agent(model, tools), "t1"))
    assert done.final_output == "done"
    assert dict(outputs(model))["c1"] == output
    assert [row["args"] for row in ledger.runs("send_email")] == sent
    assert [row["key"] for row in ledger.runs("send_email")] == [waiting.request_id] * len(sent)


def test_a_plain_false_stands_in_while_the_answer_holds_and_goes_with_it(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    """The SDK reads `needs_approval` twice per call: while the rules ask about no call of the
    tool, that is a plain `False` in the tool's `__dict__`; a rule change removes it (from the
    tool, never left behind in a copy), and the tool asks again."""
    approval = SignoffApproval(Gate(sqlite_store, rules=RuleSet()))
    send_email, lookup = gated_tools(approval, tmp_path)
    assert send_email.needs_approval is False and lookup.needs_approval is False
    assert send_email.__dict__["needs_approval"] is False, "the stand-in: a plain attribute"
    copies = [copy.copy(send_email), copy.copy(copy.copy(send_email))]
    assert all("needs_approval" not in each.__dict__ for each in copies)
    lookup.needs_approval = False  # set by hand: kept as is, whatever the rules say later

    approval.gate.register_tool("send_email", ToolEntry(requires_approval=True))
    approval.gate.register_tool("lookup", ToolEntry(requires_approval=True))
    assert "needs_approval" not in send_email.__dict__
    for tool in [send_email, *copies]:
        assert isinstance(tool.needs_approval, RulesApproval), "asked about now"
        with bound_thread(approval.defaults, "t1", None):
            assert isinstance(tool.needs_approval, RulesApproval)
    assert lookup.needs_approval is False
