"""CrewAI's own approval path (a before-tool-call hook asking at the console with
`request_human_input`, as CrewAI's docs show) against signoff's hooks, for the same script: an
approval gives the model the same text and runs the tool once either way; a rejection blocks the
tool either way, and only signoff tells the model why."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("crewai", reason="CrewAI is tested in the second venv: pip install -e '.[dev-compat]'")

from crewai.hooks import register_before_tool_call_hook, unregister_before_tool_call_hook

from signoff import Approve, Gate, Reject, RuleSet
from signoff.integrations.crewai import SignoffHooks
from signoff.store import SQLiteStore
from tests.integrations.ledger import Ledger

from .crewai_support import TRANSFER, kickoff, make_crew

RULES = RuleSet.model_validate({"tools": {"transfer": {"requires_approval": True}}})


def console_approval(ctx: Any) -> bool | None:
    """CrewAI's own human-in-the-loop hook."""
    if ctx.tool_name != "transfer":
        return None
    answer = ctx.request_human_input(prompt=f"Allow {ctx.tool_name}?", default_message="Type 'approve':")
    return None if answer.lower() == "approve" else False


def run_crewai_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, typed: str) -> tuple[str, Ledger]:
    ledger = Ledger(tmp_path / "crewai.jsonl")
    monkeypatch.setattr("builtins.input", lambda *_: typed)
    register_before_tool_call_hook(console_approval)
    try:
        return kickoff(make_crew(ledger)[0]), ledger
    finally:
        assert unregister_before_tool_call_hook(console_approval)


def run_signoff(tmp_path: Path, store: SQLiteStore, decision: Any) -> tuple[str, Ledger]:
    ledger = Ledger(tmp_path / "signoff.jsonl")

    def person() -> None:
        while not (found := store.list_requests(status="pending")):
            time.sleep(0.01)
        store.decide(found[0].id, decision, actor="alice")

    thread = threading.Thread(target=person, daemon=True)
    thread.start()
    with SignoffHooks(Gate(store, rules=RULES)):
        out = kickoff(make_crew(ledger)[0])
    thread.join()
    return out, ledger


def test_an_approval_is_the_same_either_way(
    tmp_path: Path, sqlite_store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    theirs, their_runs = run_crewai_own(tmp_path, monkeypatch, "approve")
    ours, our_runs = run_signoff(tmp_path, sqlite_store, Approve())
    assert theirs == ours == "sent 5 to bob"
    assert (
        [row["args"] for row in their_runs.runs()] == [row["args"] for row in our_runs.runs()] == [TRANSFER]
    )


def test_a_rejection_blocks_either_way_and_only_signoff_says_why(
    tmp_path: Path, sqlite_store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    theirs, their_runs = run_crewai_own(tmp_path, monkeypatch, "no, not today")
    ours, our_runs = run_signoff(tmp_path, sqlite_store, Reject(message="not today"))
    assert theirs == "Tool execution blocked by hook. Tool: transfer"
    assert ours == "Tool execution for 'transfer' was rejected by the user. With user feedback: not today"
    assert their_runs.runs() == our_runs.runs() == []
