"""Pydantic AI through signoff in an unattended run (cron): one `ModelResponse`'s gated calls are
one round of auto-resume, and `SIGNOFF_UNATTENDED_MAX_AUTO_RESUME` caps the rounds (seed 004)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent, ToolReturnPart
from pydantic_ai.tools import DeferredToolRequests

from signoff import AutoResumeExceeded, Gate, RequestStatus, RuleSet, ToolEntry
from signoff.integrations.pydantic_ai import signoff_approval
from signoff.store import SQLiteStore

from .pai_support import (
    Ledger,
    Script,
    close_run_sync_loop,  # noqa: F401 (an autouse fixture)
    make_toolset,
)

RULES = RuleSet(tools={"send_email": ToolEntry(requires_approval=True)})


def turn(n: int) -> list[tuple[str, dict[str, Any], str]]:
    return [("send_email", {"to": f"u{n}{k}", "body": "reminder"}, f"c{n}{k}") for k in range(3)]


def test_three_gated_calls_a_turn_cap_two_fails_the_third_turn(
    tmp_path: Path, sqlite_store: SQLiteStore, lc_gate: Gate, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIGNOFF_UNATTENDED_MAX_AUTO_RESUME", "2")
    ledger = Ledger(tmp_path / "ledger")
    script = Script([turn(1), turn(2), turn(3), "done"])
    gate = Gate(lc_gate.store, rules=RULES)
    toolset = signoff_approval(make_toolset(ledger), gate, unattended=True)
    agent = Agent(script.model, toolsets=[toolset], output_type=[str, DeferredToolRequests])
    with pytest.raises(AutoResumeExceeded) as exceeded:
        # asyncio.run joins the worker threads of the turn's other calls before the store closes
        asyncio.run(agent.run("send the reminders", conversation_id="cron-1"))
    assert exceeded.value.message == "HITL auto-resume exceeded 2 attempts"
    assert sorted(run["args"]["to"] for run in ledger.runs("send_email")) == [
        f"u{n}{k}" for n in (1, 2) for k in range(3)
    ]
    assert len(script.seen) == 3  # the third turn was made, and failed the run
    returned = [
        (part.tool_call_id, part.content)
        for message in script.seen[2]
        for part in getattr(message, "parts", ())
        if isinstance(part, ToolReturnPart)
    ]
    assert returned == [(f"c{n}{k}", f"sent to u{n}{k}") for n in (1, 2) for k in range(3)]
    requests = sqlite_store.list_requests(limit=100)  # the third turn's calls asked nothing
    assert sorted(r.tool_call_id for r in requests) == [f"c{n}{k}" for n in (1, 2) for k in range(3)]
    assert {r.status for r in requests} == {RequestStatus.APPROVED}
    rounds = {r.tool_call_id: r.round for r in requests}
    assert rounds["c10"] == rounds["c11"] == rounds["c12"] != rounds["c20"] == rounds["c21"] == rounds["c22"]
    assert None not in rounds.values()
