"""A durable Agents SDK run across real processes: the agent pauses and exits, a person approves
with the CLI from another process, a third resumes from the RunState kept in the store; the
gated tool runs once, and a replay of the resume runs nothing again. Locally (the processes share
a SQLite file) and remotely (every process talks to a live server over HTTP with its own token).
And a waiting run (`wait=True`) killed while it waits: another process resumes it the same way."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from tests.integrations.processes import (
    PROCESSES_TIMEOUT,
    approve_with_cli,
    kill_while_kept,
    local_env,
    resume_again,
    run_phase,
    served,
)

pytest.importorskip("agents")

from signoff import Approve, Edit
from signoff.store import SQLiteStore

from .oa_support import Ledger

SCRIPT = Path(__file__).with_name("oa_process.py")


phase = partial(run_phase, SCRIPT)


@pytest.mark.slow
@pytest.mark.timeout(PROCESSES_TIMEOUT)
def test_pause_in_one_process_approve_with_the_cli_resume_in_a_third(tmp_path: Path) -> None:
    env = local_env(tmp_path / "signoff.db")  # no OPENAI_API_KEY: nothing may need it, the model is scripted
    three_processes(tmp_path, env, env)


@pytest.mark.slow
@pytest.mark.timeout(PROCESSES_TIMEOUT)
def test_the_same_over_a_live_server_keeps_the_run_state_on_the_server(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    with served(sqlite_store, tmp_path, agent="mail-agent") as (agent_env, person_env):
        three_processes(tmp_path, agent_env, person_env)
        assert sqlite_store.load_run_state("nightly-1", created_by="mail-agent") is None  # finished


def three_processes(folder: Path, agent_env: dict[str, str], person_env: dict[str, str]) -> None:
    """Start (pauses, exits), approve with the CLI, resume, replay; the gated tool runs once."""
    ledger = Ledger(folder / "ledger.jsonl")

    started = phase("start", folder, agent_env)
    assert started["paused"] is True and started["final_output"] is None
    (waiting,) = started["waiting"]
    assert [row["tool"] for row in ledger.runs()] == ["lookup"]  # the ungated call ran in its turn
    assert (folder / "kept.txt").read_text(), "the paused run's state was kept"

    approve_with_cli(waiting, person_env)

    resumed = phase("resume", folder, agent_env)
    assert resumed == {
        "paused": False,
        "waiting": [],
        "outputs": [["c2", "rows of t"], ["c1", "sent to alice"]],
        "final_output": "done",
    }
    assert [(row["tool"], row["key"]) for row in ledger.runs()] == [("lookup", None), ("send_email", waiting)]

    replayed = phase("replay", folder, agent_env)
    assert replayed == resumed
    assert len(ledger.runs("send_email")) == 1  # the gated call: never again

    with pytest.raises(AssertionError, match="no paused Agents SDK run"):
        phase("resume", folder, agent_env)  # finished: its state is forgotten, nothing to resume


@pytest.mark.slow
@pytest.mark.timeout(PROCESSES_TIMEOUT)
@pytest.mark.parametrize(
    ("decision", "sent"),
    [(Approve(), "sent to alice"), (Edit(args={"to": "bob", "body": "hi"}), "sent to bob")],
    ids=["approve", "edit"],
)
def test_a_waiting_run_killed_while_it_waits_is_resumed_in_another_process(
    tmp_path: Path, sqlite_store: SQLiteStore, decision: Approve | Edit, sent: str
) -> None:
    env = local_env(sqlite_store)
    ledger = Ledger(tmp_path / "ledger.jsonl")

    request, kept = kill_while_kept(SCRIPT, tmp_path, sqlite_store, "openai-agents")  # kept before it waited
    assert [row["tool"] for row in ledger.runs()] == ["lookup"]

    sqlite_store.decide(request.id, decision, actor="alice")
    resumed = phase("resume", tmp_path, env)
    assert resumed["final_output"] == "done"
    (_, shown_c1) = resumed["outputs"][1]
    assert resumed["outputs"][0] == ["c2", "rows of t"] and shown_c1.endswith(sent)
    runs = [(row["tool"], row["key"]) for row in ledger.runs()]
    assert runs == [("lookup", None), ("send_email", request.id)]
    assert ledger.runs("send_email")[0]["args"]["to"] == sent.removeprefix("sent to ")
    assert sqlite_store.load_run_state("nightly-1") is None  # finished: forgotten

    replayed = resume_again(SCRIPT, "resume", tmp_path, sqlite_store, kept, "Agents SDK")
    assert replayed == resumed
    assert len(ledger.runs("send_email")) == 1  # signoff's execution record, not the RunState, says it ran
