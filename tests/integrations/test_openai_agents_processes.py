"""A durable Agents SDK run across real processes: the agent pauses and exits, a person approves
with the CLI from another process, a third resumes from the RunState kept in the store; the
gated tool runs once, and a replay of the resume runs nothing again."""

from __future__ import annotations

import os
import sys
from functools import partial
from pathlib import Path

import pytest

from tests.integrations.processes import SRC, run, run_phase

pytest.importorskip("agents")

from .oa_support import Ledger

SCRIPT = Path(__file__).with_name("oa_process.py")


phase = partial(run_phase, SCRIPT)


@pytest.mark.slow
def test_pause_in_one_process_approve_with_the_cli_resume_in_a_third(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": SRC, "SIGNOFF_DB": str(tmp_path / "signoff.db")}
    env.pop("SIGNOFF_URL", None)
    env.pop("OPENAI_API_KEY", None)  # nothing may need it: the model is scripted
    ledger = Ledger(tmp_path / "ledger.jsonl")

    started = phase("start", tmp_path, env)
    assert started["paused"] is True and started["final_output"] is None
    (waiting,) = started["waiting"]
    assert [row["tool"] for row in ledger.runs()] == ["lookup"]  # the ungated call ran in its turn

    run(sys.executable, "-m", "signoff.cli", "approve", waiting, "--as", "alice", env=env)

    resumed = phase("resume", tmp_path, env)
    assert resumed == {
        "paused": False,
        "waiting": [],
        "outputs": [["c2", "rows of t"], ["c1", "sent to alice"]],
        "final_output": "done",
    }
    assert [(row["tool"], row["key"]) for row in ledger.runs()] == [("lookup", None), ("send_email", waiting)]

    replayed = phase("replay", tmp_path, env)
    assert replayed == resumed
    assert len(ledger.runs("send_email")) == 1  # the gated call: never again

    with pytest.raises(AssertionError, match="no paused Agents SDK run"):
        phase("resume", tmp_path, env)  # finished: its state is forgotten, nothing to resume
