"""A durable Strands run across real processes: the agent pauses on an interrupt and exits (its
session in a FileSessionManager folder), a person approves with the CLI from another process, a
third resumes; the gated tool runs once, and a resume from a stale copy of the session runs
nothing again. Locally (the processes share a SQLite file) and remotely (each talks to a live
server with its own token)."""

from __future__ import annotations

import os
import sys
from functools import partial
from pathlib import Path

import pytest

pytest.importorskip("strands", reason="strands-agents pins mcp<2.2: tested in the second venv (.venv-compat)")

from signoff.store import SQLiteStore
from tests.integrations.ledger import Ledger
from tests.integrations.processes import SRC, run, run_phase
from tests.live import LiveServer

SCRIPT = Path(__file__).with_name("strands_process.py")
phase = partial(run_phase, SCRIPT)
PROCESSES_TIMEOUT = 480
"""Five Python processes, each importing the framework: on a loaded 2-core machine each one
takes up to a minute, past the suite's default 120 s."""


@pytest.mark.slow
@pytest.mark.timeout(PROCESSES_TIMEOUT)
def test_pause_in_one_process_approve_with_the_cli_resume_in_a_third(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": SRC, "SIGNOFF_DB": str(tmp_path / "signoff.db")}
    env.pop("SIGNOFF_URL", None)
    three_processes(tmp_path, env, env)


@pytest.mark.slow
@pytest.mark.timeout(PROCESSES_TIMEOUT)
def test_the_same_over_a_live_server(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    with LiveServer(sqlite_store) as server:
        base = {**os.environ, "PYTHONPATH": SRC, "SIGNOFF_URL": server.url}
        base["SIGNOFF_DB"] = str(tmp_path / "unused.db")  # the URL wins: nothing may be written here
        agent_env = {**base, "SIGNOFF_TOKEN": server.user("pay-agent", role="agent")}
        person_env = {**base, "SIGNOFF_TOKEN": server.user("alice", role="member")}
        three_processes(tmp_path, agent_env, person_env)
        (request,) = sqlite_store.list_requests(thread_id="nightly-1")
        assert request.created_by == "pay-agent" and request.decision is not None
        assert request.decision.actor == "alice"
    assert not (tmp_path / "unused.db").exists()


def three_processes(folder: Path, agent_env: dict[str, str], person_env: dict[str, str]) -> None:
    """Start (pauses, exits), approve with the CLI, resume, replay; the gated tool runs once."""
    ledger = Ledger(folder / "ledger.jsonl")

    started = phase("start", folder, agent_env)
    assert started["paused"] is True and started["seen"] == [] and started["text"] is None
    (waiting,) = started["waiting"]
    assert [row["tool"] for row in ledger.runs()] == ["lookup"]  # the ungated call ran in its turn

    undecided = phase("resume", folder, agent_env)
    assert undecided == {"paused": True, "waiting": [waiting], "text": None, "seen": []}

    approve = [sys.executable, "-m", "signoff.cli", "approve", waiting]
    if "SIGNOFF_URL" not in person_env:
        approve += ["--as", "alice"]
    run(*approve, env=person_env)

    resumed = phase("resume", folder, agent_env)
    assert resumed == {
        "paused": False,
        "waiting": [],
        "text": "done",
        "seen": [["c0-2", "success", ["rows of t"]], ["c0-1", "success", ["sent 5 to bob"]]],
    }
    assert [(row["tool"], row["key"]) for row in ledger.runs()] == [("lookup", None), ("transfer", waiting)]

    replayed = phase("replay", folder, agent_env)
    assert replayed == resumed
    assert len(ledger.runs("transfer")) == 1  # signoff's execution record, not the session, says it ran

    with pytest.raises(AssertionError, match="has no call paused by signoff"):
        phase("resume", folder, agent_env)  # finished: nothing paused in the session
