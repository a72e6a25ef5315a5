"""A durable Agent Framework run across real processes: the agent pauses and exits (its session
kept in signoff's store), a person approves with the CLI from another process, a third resumes;
the gated tool runs once, and a resume from the stale saved session runs nothing again. Locally
(the processes share a SQLite file) and remotely (each talks to a live server with its own token)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integrations.processes import PROCESSES_TIMEOUT, local_env, served, start_approve_resume

pytest.importorskip("agent_framework")

from signoff.store import SQLiteStore

SCRIPT = Path(__file__).with_name("af_process.py")


@pytest.mark.slow
@pytest.mark.timeout(PROCESSES_TIMEOUT)
def test_pause_in_one_process_approve_with_the_cli_resume_in_a_third(tmp_path: Path) -> None:
    env = local_env(tmp_path / "signoff.db")
    three_processes(tmp_path, env, env)


@pytest.mark.slow
@pytest.mark.timeout(PROCESSES_TIMEOUT)
def test_the_same_over_a_live_server_keeps_the_session_on_the_server(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    with served(sqlite_store, tmp_path) as (agent_env, person_env):
        three_processes(tmp_path, agent_env, person_env)
        assert sqlite_store.load_run_state("nightly-1", created_by="pay-agent") is None  # finished


def three_processes(folder: Path, agent_env: dict[str, str], person_env: dict[str, str]) -> None:
    """Start (pauses, exits), approve with the CLI, resume, replay; the gated tool runs once."""
    seen = [["c0-2", "rows of t"], ["c0-1", "sent 5 to bob"]]
    start_approve_resume(
        SCRIPT, folder, agent_env, person_env, seen=seen, finished="no paused Agent Framework run"
    )
