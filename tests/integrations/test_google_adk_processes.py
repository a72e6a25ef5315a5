"""A durable Google ADK run across real processes: the agent pauses and exits (its session in
ADK's SQLite session service), a person approves with the CLI from another process, a third
resumes; the gated tool runs once, and a resume from a stale copy of the session runs nothing
again. Locally (the processes share a SQLite file) and remotely (each talks to a live server with
its own token)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integrations.processes import PROCESSES_TIMEOUT, local_env, served, start_approve_resume

pytest.importorskip("google.adk")

from signoff.store import SQLiteStore

SCRIPT = Path(__file__).with_name("adk_process.py")


@pytest.mark.slow
@pytest.mark.timeout(PROCESSES_TIMEOUT)
def test_pause_in_one_process_approve_with_the_cli_resume_in_a_third(tmp_path: Path) -> None:
    env = local_env(tmp_path / "signoff.db")
    three_processes(tmp_path, env, env)


@pytest.mark.slow
@pytest.mark.timeout(PROCESSES_TIMEOUT)
def test_the_same_over_a_live_server(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    with served(sqlite_store, tmp_path) as (agent_env, person_env):
        three_processes(tmp_path, agent_env, person_env)


def three_processes(folder: Path, agent_env: dict[str, str], person_env: dict[str, str]) -> None:
    """Start (pauses, exits), approve with the CLI, resume, replay; the gated tool runs once."""
    seen = [["c0-1", {"result": "sent 5 to bob"}], ["c0-2", {"result": "rows of t"}]]
    started = start_approve_resume(
        SCRIPT, folder, agent_env, person_env, seen=seen, finished="has no call paused by signoff"
    )
    assert started["text"] is None
