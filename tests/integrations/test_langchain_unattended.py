"""SignoffMiddleware in an unattended run (cron): one model turn's gated calls are one round of
auto-resume, and `SIGNOFF_UNATTENDED_MAX_AUTO_RESUME` caps the rounds (seed 004)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver

from signoff import AutoResumeExceeded, Gate, RequestStatus
from signoff.integrations.langchain import SignoffMiddleware
from signoff.store import SQLiteStore

from .lc_support import Ledger, calls, make_tools, script, tool_messages

CONFIG: Any = {"configurable": {"thread_id": "cron-1"}}
ASK = {"messages": [{"role": "user", "content": "send the reminders"}]}


def turn(n: int) -> Any:
    return calls(*(("send_email", {"to": f"u{n}{k}", "body": "reminder"}, f"c{n}{k}") for k in range(3)))


@pytest.mark.parametrize("wait", [False, True], ids=["durable", "waiting"])
def test_three_gated_calls_a_turn_cap_two_fails_the_third_turn(
    tmp_path: Path,
    sqlite_store: SQLiteStore,
    lc_gate: Gate,
    monkeypatch: pytest.MonkeyPatch,
    wait: bool,
) -> None:
    monkeypatch.setenv("SIGNOFF_UNATTENDED_MAX_AUTO_RESUME", "2")
    ledger = Ledger(tmp_path / "ledger")
    model = script(turn(1), turn(2), turn(3), "done")
    middleware = SignoffMiddleware(
        interrupt_on={"send_email": True}, gate=lc_gate, unattended=True, wait=wait
    )
    agent = create_agent(
        model, tools=make_tools(ledger), middleware=[middleware], checkpointer=InMemorySaver()
    )
    with pytest.raises(AutoResumeExceeded) as exceeded:
        agent.invoke(ASK, CONFIG)
    assert exceeded.value.message == "HITL auto-resume exceeded 2 attempts"
    # the tools node runs a turn's calls concurrently: in any order, each once
    assert sorted(run["args"]["to"] for run in ledger.runs("send_email")) == [
        f"u{n}{k}" for n in (1, 2) for k in range(3)
    ]
    assert len(model.seen) == 3  # the third turn was made, and failed the run
    assert [m["content"] for m in tool_messages(model.seen[2])] == [
        f"sent to u{n}{k}" for n in (1, 2) for k in range(3)
    ]
    requests = sqlite_store.list_requests(limit=100)  # the third turn's calls asked nothing
    assert sorted(r.tool_call_id for r in requests) == [f"c{n}{k}" for n in (1, 2) for k in range(3)]
    assert {r.status for r in requests} == {RequestStatus.APPROVED}
    rounds = {r.tool_call_id: r.round for r in requests}
    assert rounds["c10"] == rounds["c11"] == rounds["c12"] != rounds["c20"] == rounds["c21"] == rounds["c22"]
    assert None not in rounds.values()
