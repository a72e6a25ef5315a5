"""A durable Pydantic AI run across processes: the agent exits while a call is pending, a person
approves with the CLI from another process, a third process resumes from the saved history, the
tool runs once; replaying the resume runs nothing. And a waiting run (`wait=True`) killed while
it waits: another process resumes it from the messages it kept in the store."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from tests.integrations.processes import approve_with_cli, kill_while_kept, local_env, resume_again, run_phase

pytest.importorskip("pydantic_ai")

from signoff import Approve
from signoff.store import SQLiteStore

from .pai_support import Ledger

SCRIPT = Path(__file__).with_name("pai_process.py")


phase = partial(run_phase, SCRIPT)


@pytest.mark.slow
def test_pause_in_one_process_decide_in_another_resume_in_a_third(tmp_path: Path) -> None:
    env = local_env(tmp_path / "signoff.db")
    ledger = Ledger(tmp_path / "ledger.jsonl")

    started = phase("start", tmp_path, env)
    (waiting,) = started["deferred"]
    assert waiting["tool_call_id"] == "c1" and waiting["to"] == "alice"
    request_id = waiting["signoff"]["request_id"]
    assert [run["tool"] for run in ledger.runs()] == ["read_data"]  # the ungated call ran at once

    approve_with_cli(request_id, env)

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


@pytest.mark.slow
def test_a_waiting_run_killed_while_it_waits_is_resumed_in_another_process(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    env = local_env(sqlite_store)
    ledger = Ledger(tmp_path / "ledger.jsonl")

    request, kept = kill_while_kept(SCRIPT, tmp_path, sqlite_store, "pydantic-ai")  # kept before it waited
    assert [run["tool"] for run in ledger.runs()] == ["read_data"]

    sqlite_store.decide(request.id, Approve(), actor="alice")
    resumed = phase("resume-kept", tmp_path, env)
    assert resumed["output"] == "done"
    assert resumed["seen"] == [
        [
            ["tool-return", "send_email", "c1", "sent to alice", "success"],
            ["tool-return", "read_data", "c2", "rows of t", "success"],
        ]
    ]
    # the ungated call's result was not in the run's messages yet when it was kept: it ran again,
    # as a replay repeats calls nobody gates; the gated one ran once, under its request
    assert sorted((run["tool"], run["key"]) for run in ledger.runs()[1:]) == [
        ("read_data", None),
        ("send_email", request.id),
    ]
    assert sqlite_store.load_run_state("nightly-1") is None  # the resumed run ended: forgotten

    replayed = resume_again(SCRIPT, "resume-kept", tmp_path, sqlite_store, kept, "Pydantic AI")
    assert replayed["seen"] == resumed["seen"]
    assert len(ledger.runs("send_email")) == 1  # signoff's execution record says it ran: never again
