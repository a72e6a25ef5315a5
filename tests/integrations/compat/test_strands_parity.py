"""Strands' own approval (the `HumanInTheLoop` intervention, paused with an interrupt and resumed
with "y" or "n") and signoff's hooks on the same script: which calls pause, how the run pauses and
resumes, what the model sees for approve and reject; and what only signoff carries (the reason of
a rejection; edit and respond, in the decisions tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("strands", reason="strands-agents pins mcp<2.2: tested in the second venv (.venv-compat)")

from strands.vended_interventions.hitl import HumanInTheLoop

from signoff import Approve, Gate, Reject, RuleSet
from signoff.integrations.strands import SignoffHooks
from signoff.store import SQLiteStore
from tests.integrations.ledger import Ledger

from .strands_support import TRANSFER, USER, Scripted, final_text, make_agent, make_tools

RULES = RuleSet.model_validate({"tools": {"transfer": {"requires_approval": True}}})
LOOKUP_SEEN = ("c0-2", "success", ["rows of t"])


def own(ledger: Ledger, model: Scripted) -> Any:
    """Strands' own approval for every tool but `lookup`."""
    return make_agent(model, make_tools(ledger), [], interventions=[HumanInTheLoop(allowed_tools=["lookup"])])


def resume_own(agent: Any, interrupts: list[Any], answer: str) -> Any:
    return agent([{"interruptResponse": {"interruptId": i.id, "response": answer}} for i in interrupts])


@pytest.mark.parametrize(
    ("answer", "decision"), [("y", Approve()), ("n", Reject())], ids=["approve", "reject"]
)
def test_the_same_calls_pause_and_resume_the_same_way(
    tmp_path: Path, sqlite_store: SQLiteStore, answer: str, decision: Any
) -> None:
    theirs_ledger, ours_ledger = Ledger(tmp_path / "theirs"), Ledger(tmp_path / "ours")
    theirs_model, ours_model = Scripted(), Scripted()
    theirs = own(theirs_ledger, theirs_model)
    hooks = SignoffHooks(Gate(sqlite_store, rules=RULES))
    ours = make_agent(ours_model, make_tools(ours_ledger), [hooks])

    theirs_paused, ours_paused = theirs(USER), ours(USER)
    for paused in (theirs_paused, ours_paused):
        assert paused.stop_reason == "interrupt" and len(paused.interrupts) == 1
    assert theirs_ledger.runs() == ours_ledger.runs()  # lookup ran in the turn, transfer waits
    assert [row["tool"] for row in ours_ledger.runs()] == ["lookup"]

    (request,) = sqlite_store.list_requests()
    sqlite_store.decide(request.id, decision, actor="alice")
    theirs_done = resume_own(theirs, theirs_paused.interrupts, answer)
    ours_done = hooks.resume(ours).result
    assert final_text(theirs_done) == final_text(ours_done) == "done"
    ran = [[row["args"] for row in ledger.runs("transfer")] for ledger in (theirs_ledger, ours_ledger)]
    assert ran[0] == ran[1]
    if answer == "y":
        shown = ("c0-1", "success", ["sent 5 to bob"])
        assert theirs_model.seen == ours_model.seen == [LOOKUP_SEEN, shown]
        assert [r["args"] for r in ours_ledger.runs("transfer")] == [TRANSFER]
    else:  # both an error result in the call's place; signoff's says the rule's text
        prompt = 'Approve "transfer"?\n  Input: {"amount": 5, "to": "bob"}'
        assert theirs_model.seen == [LOOKUP_SEEN, ("c0-1", "error", [f"CONFIRMATION_FAILED: {prompt}"])]
        rejected = ("c0-1", "error", ["Tool execution for 'transfer' was rejected by the user."])
        assert ours_model.seen == [LOOKUP_SEEN, rejected]
        assert ours_ledger.runs("transfer") == []


def test_only_signoff_carries_the_reason_of_a_rejection(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    """Strands' own approval takes yes or no: any other answer is a no, its text lost."""
    theirs_model = Scripted()
    theirs = own(Ledger(tmp_path / "theirs"), theirs_model)
    resume_own(theirs, theirs(USER).interrupts, "no: the amount is wrong")
    (their_seen,) = [seen for seen in theirs_model.seen if seen[0] == "c0-1"]
    assert "the amount is wrong" not in their_seen[2][0]

    ours_model = Scripted()
    hooks = SignoffHooks(Gate(sqlite_store, rules=RULES))
    ours = make_agent(ours_model, make_tools(Ledger(tmp_path / "ours")), [hooks])
    ours(USER)
    (request,) = sqlite_store.list_requests()
    sqlite_store.decide(request.id, Reject(message="the amount is wrong"), actor="alice")
    hooks.resume(ours)
    rejected = (
        "Tool execution for 'transfer' was rejected by the user. With user feedback: the amount is wrong"
    )
    assert ours_model.seen == [LOOKUP_SEEN, ("c0-1", "error", [rejected])]
