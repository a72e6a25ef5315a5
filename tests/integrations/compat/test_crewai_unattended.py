"""CrewAI through signoff in an unattended run (cron): each model turn is a round of auto-resume
(the agent executor's iteration: CrewAI's hooks see no turn), and
`SIGNOFF_UNATTENDED_MAX_AUTO_RESUME` caps the rounds; the call past the cap is blocked, not run,
and the model is told why."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("crewai", reason="CrewAI is tested in the second venv: pip install -e '.[dev-compat]'")

from signoff import Gate, RequestStatus, RuleSet
from signoff.integrations.crewai import SignoffHooks
from signoff.store import SQLiteStore
from tests.integrations.ledger import Ledger

from .crewai_support import Scripted, kickoff, make_crew

RULES = RuleSet.model_validate({"tools": {"transfer": {"requires_approval": True}}})


def test_each_turn_is_a_round_and_the_cap_blocks_the_third(
    tmp_path: Path, sqlite_store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIGNOFF_UNATTENDED_MAX_AUTO_RESUME", "2")
    ledger = Ledger(tmp_path / "ledger.jsonl")
    crew, _ = make_crew(ledger, model=Scripted(model="scripted", turns=3))
    with SignoffHooks(Gate(sqlite_store, rules=RULES), unattended=True):
        out = kickoff(crew)
    assert out.split(" | ") == [
        "sent 5 to bob",
        "sent 6 to bob",
        "Tool transfer was not run: signoff refused the call (HITL auto-resume exceeded 2 attempts).",
    ]
    assert [row["args"]["amount"] for row in ledger.runs("transfer")] == [5, 6]
    requests = sqlite_store.list_requests(limit=10)
    assert len(requests) == 2 and {r.status for r in requests} != {RequestStatus.PENDING}
    rounds = [r.round for r in requests]
    assert None not in rounds and len(set(rounds)) == 2
