"""Haystack through signoff in an unattended run (cron): with `SignoffPauseHook`, and with
`SignoffConfirmationHook` + `SignoffConfirmationStrategy` (waiting), one model turn's gated calls
are one round of auto-resume, and `SIGNOFF_UNATTENDED_MAX_AUTO_RESUME` caps the rounds (seed 004)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("haystack")

from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage

from signoff import AutoResumeExceeded, Gate, RequestStatus, RuleSet
from signoff.integrations.haystack import (
    SignoffConfirmationHook,
    SignoffConfirmationStrategy,
    SignoffPauseHook,
)
from signoff.store import SQLiteStore

from .hs_support import Ledger, Script, calls, make_tools

RULES = RuleSet.model_validate({"tools": {"send_email": {"requires_approval": True}}})
CRON: dict[str, Any] = {"signoff": {"thread_id": "cron-1", "unattended": True}}


def turn(n: int) -> ChatMessage:
    return calls(*(("send_email", {"to": f"u{n}{k}", "body": "reminder"}, f"c{n}{k}") for k in range(3)))


def test_three_gated_calls_a_turn_cap_two_fails_the_third_turn(
    tmp_path: Path, sqlite_store: SQLiteStore, lc_gate: Gate, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIGNOFF_UNATTENDED_MAX_AUTO_RESUME", "2")
    ledger = Ledger(tmp_path / "ledger.jsonl")
    script = Script(turn(1), turn(2), turn(3), "done")
    hook = SignoffPauseHook(gate=Gate(lc_gate.store, rules=RULES))
    agent = Agent(chat_generator=script.generator(), tools=make_tools(ledger), hooks={"before_tool": [hook]})
    with pytest.raises(AutoResumeExceeded) as exceeded:
        agent.run([ChatMessage.from_user("send the reminders")], hook_context=CRON)
    assert_two_rounds_then_exceeded(exceeded.value, ledger, script, sqlite_store)


@pytest.mark.parametrize("mode", ["run", "run_async"])
def test_waiting_strategy_counts_a_turn_as_one_round(
    tmp_path: Path, sqlite_store: SQLiteStore, lc_gate: Gate, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    monkeypatch.setenv("SIGNOFF_UNATTENDED_MAX_AUTO_RESUME", "2")
    ledger = Ledger(tmp_path / "ledger.jsonl")
    script = Script(turn(1), turn(2), turn(3), "done")
    strategy = SignoffConfirmationStrategy(Gate(lc_gate.store, rules=RULES))
    hook = SignoffConfirmationHook({"*": strategy})
    agent = Agent(chat_generator=script.generator(), tools=make_tools(ledger), hooks={"before_tool": [hook]})
    messages = [ChatMessage.from_user("send the reminders")]

    def run() -> object:
        if mode == "run":
            return agent.run(messages, hook_context=CRON)
        return asyncio.run(agent.run_async(messages, hook_context=CRON))

    with pytest.raises(AutoResumeExceeded) as exceeded:
        run()
    assert_two_rounds_then_exceeded(exceeded.value, ledger, script, sqlite_store)


def assert_two_rounds_then_exceeded(
    exceeded: AutoResumeExceeded, ledger: Ledger, script: Script, sqlite_store: SQLiteStore
) -> None:
    assert exceeded.message == "HITL auto-resume exceeded 2 attempts"
    assert sorted(run["args"]["to"] for run in ledger.runs("send_email")) == [
        f"u{n}{k}" for n in (1, 2) for k in range(3)
    ]
    assert len(script.seen) == 3  # the third turn was made, and failed the run
    results = [
        (m.tool_call_result.origin.id, m.tool_call_result.result)
        for m in script.seen[2]
        if m.tool_call_result
    ]
    assert results == [(f"c{n}{k}", f"sent to u{n}{k}") for n in (1, 2) for k in range(3)]
    requests = sqlite_store.list_requests(limit=100)  # the third turn's calls asked nothing
    assert sorted(r.tool_call_id for r in requests) == [f"c{n}{k}" for n in (1, 2) for k in range(3)]
    assert {r.status for r in requests} == {RequestStatus.APPROVED}
    rounds = {r.tool_call_id: r.round for r in requests}
    assert rounds["c10"] == rounds["c11"] == rounds["c12"] != rounds["c20"] == rounds["c21"] == rounds["c22"]
    assert None not in rounds.values()
