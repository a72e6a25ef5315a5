"""A durable Pydantic AI run across processes: the agent exits while a call is pending, a person
approves with the CLI from another process, a third process resumes from the saved history, the
tool runs once; replaying the resume runs nothing."""

from __future__ import annotations

import os
import sys
from functools import partial
from pathlib import Path

import pytest

from tests.integrations.processes import SRC, run, run_phase

pytest.importorskip("pydantic_ai")

from .pai_support import Ledger

SCRIPT = Path(__file__).with_name("pai_process.py")


phase = partial(run_phase, SCRIPT)


@pytest.mark.slow
def test_pause_in_one_process_decide_in_another_resume_in_a_third(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": SRC, "SIGNOFF_DB": str(tmp_path / "signoff.db")}
    env.pop("SIGNOFF_URL", None)
    ledger = Ledger(tmp_path / "ledger.jsonl")

    started = phase("start", tmp_path, env)
    (waiting,) = started["deferred"]
    assert waiting["tool_call_id"] == "c1" and waiting["to"] == "alice"
    request_id = waiting["signoff"]["request_id"]
    assert [run["tool"] for run in ledger.runs()] == ["read_data"]  # the ungated call ran at once

    run(sys.executable, "-m", "signoff.cli", "approve", request_id, "--as", "alice", env=env)

    resumed = phase("resume", tmp_path, env)
    assert resumed["output"] == "done"
    assert resumed["seen"] == [
        [
            ["tool-return", "send_email", "c1", "sent to alice", "success"],
            ["tool-return", "read_data", "c2", "rows of t", "success"],
        ]
    ]
    assert [(run["tool"], run["key"]) for run in ledger.runs()] == [
        ("read_data", None),
        ("send_email", request_id),
    ]

    replayed = phase("replay", tmp_path, env)
    assert replayed["output"] == "done again"
    assert replayed["seen"] == resumed["seen"]
    assert len(ledger.runs()) == 2  # nothing ran again
