"""The Agents SDK through signoff in an unattended run (cron): one turn's interruptions are one
round of auto-resume, and `SIGNOFF_UNATTENDED_MAX_AUTO_RESUME` caps the rounds (seed 004)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents.testing import ScriptedModel, assistant_message, function_call

from signoff import AutoResumeExceeded, Gate, RequestStatus, RuleSet
from signoff.integrations.openai_agents import SignoffApproval
from signoff.store import SQLiteStore

from .oa_support import Ledger, agent, make_tools, outputs

RULES = RuleSet.model_validate({"tools": {"send_email": {"requires_approval": True}}})


def turn(n: int) -> list[Any]:
    return [
        function_call("send_email", {"to": f"u{n}{k}", "body": "reminder"}, call_id=f"c{n}{k}")
        for k in range(3)
    ]


def test_three_gated_calls_a_turn_cap_two_fails_the_third_turn(
    tmp_path: Path, sqlite_store: SQLiteStore, lc_gate: Gate, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIGNOFF_UNATTENDED_MAX_AUTO_RESUME", "2")
    ledger = Ledger(tmp_path / "ledger.jsonl")
    approval = SignoffApproval(Gate(lc_gate.store, rules=RULES), unattended=True)
    tools = approval.gate_tools(make_tools(ledger))
    model = ScriptedModel([turn(1), turn(2), turn(3), [assistant_message("done")]])
    with pytest.raises(AutoResumeExceeded) as exceeded:
        asyncio.run(approval.run(agent(model, tools), "send the reminders", thread_id="cron-1"))
    assert exceeded.value.message == "HITL auto-resume exceeded 2 attempts"
    assert sorted(run["args"]["to"] for run in ledger.runs("send_email")) == [
        f"u{n}{k}" for n in (1, 2) for k in range(3)
    ]
    assert len(model.calls) == 3  # the third turn was made, and failed the run
    assert outputs(model) == [(f"c{n}{k}", f"sent to u{n}{k}") for n in (1, 2) for k in range(3)]
    requests = sqlite_store.list_requests(limit=100)  # the third turn's calls asked nothing
    assert sorted(r.tool_call_id for r in requests) == [f"c{n}{k}" for n in (1, 2) for k in range(3)]
    assert {r.status for r in requests} == {RequestStatus.APPROVED}
    rounds = {r.tool_call_id: r.round for r in requests}
    assert rounds["c10"] == rounds["c11"] == rounds["c12"] != rounds["c20"] == rounds["c21"] == rounds["c22"]
    assert None not in rounds.values()
