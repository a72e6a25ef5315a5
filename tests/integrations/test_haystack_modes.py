"""The Haystack adapters' edges: a disallowed decision, a deadline, Haystack serialization of an agent
with the hooks, a durable run across real processes (pause, decide with the CLI, resume), and a
waiting run killed while it waits, resumed in another process."""

from __future__ import annotations

import json
import os
import sys
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests.integrations.processes import SRC, kill_while_kept, local_env, resume_again, run, run_phase

pytest.importorskip("haystack")

from haystack.components.agents import Agent
from haystack.components.generators.chat import MockChatGenerator
from haystack.core.serialization import allow_deserialization_module
from haystack.dataclasses import ChatMessage
from haystack.hooks.human_in_the_loop import ConfirmationHook
from haystack.tools import tool

from signoff import Approve, DecisionNotAllowed, Edit, Gate, RuleSet
from signoff.integrations.haystack import (
    AWAITING_APPROVAL,
    SignoffConfirmationStrategy,
    SignoffConfirmationUI,
    SignoffPauseHook,
    waiting_requests,
)
from signoff.integrations.haystack.paused import history_of
from signoff.store import SQLiteStore

from .hs_support import Ledger, Script, calls, make_tools, shown

EMAIL = {"to": "alice", "body": "hi"}
CONTEXT: dict[str, Any] = {"signoff": {"thread_id": "t1"}}
USER = [ChatMessage.from_user("mail alice")]
SCRIPT = Path(__file__).with_name("hs_process.py")


@tool
def send_email(to: str, body: str) -> str:
    """Send an email (module level: Haystack serializes a tool's function by its import path)."""
    return f"sent to {to}"


@tool
def read_data(table: str) -> str:
    """Read rows."""
    return f"rows of {table}"


def rules(**entry: Any) -> RuleSet:
    return RuleSet.model_validate({"tools": {"send_email": {"requires_approval": True, **entry}}})


def test_a_disallowed_decision_is_refused_and_the_call_stays_pending(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    gate = Gate(sqlite_store, rules=rules(allowed_decisions=["approve", "reject"]))
    agent = Agent(
        chat_generator=Script(calls(("send_email", EMAIL, "c1"))).generator(),
        tools=make_tools(ledger),
        hooks={"before_tool": [SignoffPauseHook(gate=gate)]},
    )
    assert agent.run(USER, hook_context=CONTEXT)["exit_reason"] == AWAITING_APPROVAL
    request = sqlite_store.find_request("t1", "c1")
    assert request is not None
    with pytest.raises(DecisionNotAllowed, match="edit"):
        sqlite_store.decide(request.id, Edit(args={"to": "bob", "body": "hi"}), actor="alice")
    assert sqlite_store.get_request(request.id).status == "pending"
    assert ledger.runs() == []


@pytest.mark.slow
def test_a_deadline_gives_the_on_expire_outcome(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    script = Script(calls(("send_email", EMAIL, "c1")), "done")
    strategy = SignoffConfirmationStrategy(
        Gate(sqlite_store, rules=rules(deadline="1s", expire_message="Too late."))
    )
    agent = Agent(
        chat_generator=script.generator(),
        tools=make_tools(ledger),
        hooks={"before_tool": [ConfirmationHook(confirmation_strategies={"*": strategy})]},
    )
    agent.run(USER, hook_context=CONTEXT)  # nobody decides: run waits until the deadline
    assert shown(script.seen[1])[2] == {"role": "tool", "text": None, "result": ("Too late.", "c1", True)}
    assert ledger.runs() == []
    request = sqlite_store.find_request("t1", "c1")
    assert request is not None and request.status == "expired"


def test_an_agent_with_the_hooks_round_trips_through_haystack_serialization(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIGNOFF_DB", str(tmp_path / "signoff.db"))
    monkeypatch.delenv("SIGNOFF_URL", raising=False)
    strategy = SignoffConfirmationStrategy(rules=rules(), agent="mailer", timeout=5.0)
    agent = Agent(
        chat_generator=MockChatGenerator(responses=["done"]),
        tools=[send_email, read_data],
        hooks={
            "before_tool": [
                SignoffPauseHook({("send_email", "read_data"): strategy, "*": SignoffConfirmationStrategy()})
            ]
        },
    )
    data = agent.to_dict()
    (hook_data,) = data["init_parameters"]["hooks"]["before_tool"]
    assert hook_data["type"] == "signoff.integrations.haystack.pause.SignoffPauseHook"
    assert set(hook_data["init_parameters"]["confirmation_strategies"]) == {
        '["send_email", "read_data"]',
        "*",
    }
    allow_deserialization_module("tests.integrations")  # the tools' module (signoff's is, once imported)
    again = Agent.from_dict(json.loads(json.dumps(data)))
    (hook,) = again.hooks["before_tool"]
    assert isinstance(hook, SignoffPauseHook)
    copied = hook.strategy_for("send_email")
    assert isinstance(copied, SignoffConfirmationStrategy)
    assert copied.defaults.agent == "mailer" and copied.timeout == 5.0
    assert copied.gate.explain("send_email").ask and not copied.gate.explain("other").ask
    assert again.to_dict() == data

    ui = SignoffConfirmationUI(requester="alice")
    assert SignoffConfirmationUI.from_dict(ui.to_dict()).defaults.requester == "alice"


phase = partial(run_phase, SCRIPT)


@pytest.mark.slow
def test_pause_in_one_process_decide_in_another_resume_in_a_third(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": SRC, "SIGNOFF_DB": str(tmp_path / "signoff.db")}
    env.pop("SIGNOFF_URL", None)
    ledger = Ledger(tmp_path / "ledger.jsonl")

    started = phase("start", tmp_path, env)
    assert started["exit_reason"] == AWAITING_APPROVAL
    (waiting,) = started["waiting"]
    assert ledger.runs() == []  # no tool ran, the gated nor the ungated one

    run(sys.executable, "-m", "signoff.cli", "approve", waiting, "--as", "alice", env=env)

    resumed = phase("resume", tmp_path, env)
    assert resumed["exit_reason"] == "text"
    (seen,) = resumed["seen"]
    assert [m.get("result") for m in seen[-2:]] == [
        ["sent to alice", "c1", False],
        ["rows of t", "c2", False],
    ]
    assert sorted((r["tool"], r["key"]) for r in ledger.runs()) == [
        ("read_data", None),
        ("send_email", waiting),
    ]

    replayed = phase("replay", tmp_path, env)
    assert replayed["seen"] == resumed["seen"]
    assert [r["tool"] for r in ledger.runs()].count("send_email") == 1  # the gated call: never again


@pytest.mark.slow
def test_a_waiting_run_killed_while_it_waits_is_resumed_in_another_process(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    env = local_env(sqlite_store)
    ledger = Ledger(tmp_path / "ledger.jsonl")

    request, kept = kill_while_kept(SCRIPT, tmp_path, sqlite_store, "haystack")  # kept before it waited
    assert waiting_requests(history_of(kept.state)) == [request.id]  # as a durable pause keeps it
    assert ledger.runs() == []  # the turn's tools run after its decisions

    sqlite_store.decide(request.id, Approve(), actor="alice")
    resumed = phase("resume-kept", tmp_path, env)
    assert resumed["exit_reason"] == "text"
    (seen,) = resumed["seen"]
    assert [m.get("result") for m in seen[-2:]] == [
        ["sent to alice", "c1", False],
        ["rows of t", "c2", False],
    ]
    assert sorted((r["tool"], r["key"]) for r in ledger.runs()) == [
        ("read_data", None),
        ("send_email", request.id),
    ]
    assert sqlite_store.load_run_state("nightly-1") is None  # the resumed run ended: forgotten

    replayed = resume_again(SCRIPT, "resume-kept", tmp_path, sqlite_store, kept, "Haystack")
    assert replayed["seen"] == resumed["seen"]
    assert [r["tool"] for r in ledger.runs()].count("send_email") == 1  # its execution record: never again


def test_the_no_approval_path_reads_the_runs_scope_and_the_rules_in_force(sqlite_store: SQLiteStore) -> None:
    """What `ConfirmationHook` gets for a call nothing asks about, and what still makes one ask."""
    from signoff import ReviewTimeout

    sqlite_store.replace_rules(
        RuleSet.model_validate({"agents": {"strict": {"interrupt_on": {"read_data": True}}}}), actor="admin"
    )
    strategy = SignoffConfirmationStrategy(Gate(sqlite_store, rules_refresh=0.0), timeout=0.05)
    params = {"table": "users"}

    def ask(call_id: str, context: dict[str, Any]) -> Any:
        return strategy.run(
            tool_name="read_data",
            tool_description="Read rows.",
            tool_params=params,
            tool_call_id=call_id,
            confirmation_strategy_context=context,
        )

    decision = ask("c1", CONTEXT)
    assert decision.execute and decision.final_tool_params == params and decision.tool_call_id == "c1"
    with pytest.raises(ReviewTimeout):
        ask("c2", {"signoff": {"thread_id": "t1", "agent": "strict"}})
    assert sqlite_store.find_request("t1", "c2") is not None
    with pytest.raises(ValueError, match="unknown keys"):
        ask("c3", {"signoff": {"thread_id": "t1", "agnet": "strict"}})
    # a tool the rules ask about nowhere is let through before the context is read, as
    # Haystack's own strategy does: a misspelt key there is refused only where a call may ask
    unread = strategy.run(
        tool_name="search",
        tool_description="Search.",
        tool_params=params,
        tool_call_id="c3b",
        confirmation_strategy_context={"signoff": {"thread_id": "t1", "agnet": "strict"}},
    )
    assert unread.execute and unread.final_tool_params is params
    sqlite_store.set_layer("tool", "read_data", {"requires_approval": True}, actor="admin")
    with pytest.raises(ReviewTimeout):
        ask("c4", CONTEXT)
    assert sqlite_store.find_request("t1", "c1") is None and sqlite_store.find_request("t1", "c3") is None


def test_a_strategy_given_another_gate_follows_that_gates_rules(sqlite_store: SQLiteStore) -> None:
    from signoff import ReviewTimeout

    quiet = Gate(sqlite_store, rules=RuleSet.model_validate({}))
    gated = RuleSet.model_validate({"tools": {"search": {"requires_approval": True}}})
    strict = Gate(sqlite_store, rules=gated)
    strategy = SignoffConfirmationStrategy(quiet, timeout=0.05)

    def ask(call_id: str) -> Any:
        return strategy.run(
            tool_name="search",
            tool_description="Search.",
            tool_params={"q": "x"},
            tool_call_id=call_id,
            confirmation_strategy_context=CONTEXT,
        )

    assert ask("s1").execute
    strategy.gate = strict  # its first check (asks_nowhere) is the new gate's too
    with pytest.raises(ReviewTimeout):
        ask("s2")
    assert sqlite_store.find_request("t1", "s2") is not None and sqlite_store.find_request("t1", "s1") is None


def test_the_no_approval_answer_is_the_decision_haystacks_own_strategy_gives(
    sqlite_store: SQLiteStore,
) -> None:
    """Field for field (the fast path builds it by position), sync and async. (A call without an
    id gets the gate's numbered key as its id, which Haystack's hook binds back to the call's.)"""
    import asyncio

    from haystack.hooks.human_in_the_loop import BlockingConfirmationStrategy, NeverAskPolicy, SimpleConsoleUI

    stock = BlockingConfirmationStrategy(
        confirmation_policy=NeverAskPolicy(), confirmation_ui=SimpleConsoleUI()
    )
    ours = SignoffConfirmationStrategy(Gate(sqlite_store, rules=RuleSet.model_validate({})))
    for call_id in ("c1", "c2"):
        arguments: dict[str, Any] = {
            "tool_name": "read_data",
            "tool_description": "Read rows.",
            "tool_params": {"table": "users"},
            "tool_call_id": call_id,
            "confirmation_strategy_context": CONTEXT,
        }
        expected = stock.run(**arguments)
        assert ours.run(**arguments) == expected
        assert asyncio.run(ours.run_async(**arguments)) == expected
        assert expected.final_tool_params == {"table": "users"} and expected.feedback is None
