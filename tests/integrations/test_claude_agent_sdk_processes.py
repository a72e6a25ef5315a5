"""A Claude Agent SDK agent waiting in its own process on a live signoff server, and a person
deciding with the signoff CLI from another: each decision the SDK can carry reaches the model
word for word, and the gated tool runs as decided (the SDK has no durable pause to resume in a
third process: the run waits)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

from tests.integrations.processes import GIVE_UP, local_env, run, served

pytest.importorskip("claude_agent_sdk")

from signoff.store import SQLiteStore

from .ledger import Ledger
from .test_claude_agent_sdk_decisions import AGAIN, ANSWERED, NOTE, REJECTED

SCRIPT = Path(__file__).with_name("claude_process.py")
PROCESSES_TIMEOUT = 300
LOOKED_UP = ["toolu_02", "rows of t", False, []]

DECISIONS = [
    (["approve"], ["toolu_01", "sent 5 to bob", False, []], [{"amount": 5, "to": "bob"}]),
    (
        ["edit", "--args", '{"amount": 7, "to": "carol"}'],
        ["toolu_01", "sent 7 to carol", False, [NOTE]],
        [{"amount": 7, "to": "carol"}],
    ),
    (["reject", "--message", "not now"], ["toolu_01", REJECTED, True, []], []),
    (["respond", "--message", "use the card instead"], ["toolu_01", ANSWERED, True, []], []),
]


@pytest.mark.slow
@pytest.mark.timeout(PROCESSES_TIMEOUT)
@pytest.mark.parametrize(("command", "shown", "runs"), DECISIONS, ids=[row[0][0] for row in DECISIONS])
def test_the_agent_waits_a_person_decides_with_the_cli_from_another_process(
    tmp_path: Path, sqlite_store: SQLiteStore, command: list[str], shown: list[object], runs: list[object]
) -> None:
    with served(sqlite_store, tmp_path, thread="sess-1") as (agent_env, person_env):
        agent = subprocess.Popen(
            [sys.executable, str(SCRIPT), str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=agent_env,
        )
        try:
            give_up = time.monotonic() + GIVE_UP
            while not (pending := sqlite_store.list_requests(status="pending")):
                assert agent.poll() is None, agent.communicate()[1]
                assert time.monotonic() < give_up, "the agent did not get to ask"
                time.sleep(0.05)
            (request,) = pending
            assert Ledger(tmp_path / "ledger.jsonl").runs() == []  # it waits: nothing ran yet
            run(sys.executable, "-m", "signoff.cli", command[0], request.id, *command[1:], env=person_env)
            out, err = agent.communicate(timeout=GIVE_UP)
        finally:
            agent.kill()
        assert agent.returncode == 0, err
    assert json.loads(out.splitlines()[-1]) == {"seen": [shown, LOOKED_UP], "interrupted": False}
    assert [row["args"] for row in Ledger(tmp_path / "ledger.jsonl").runs("mcp__pay__transfer")] == runs
    (decided,) = sqlite_store.list_requests(thread_id="sess-1")  # by pay-agent, decided by alice (`served`)
    assert decided.agent == "payments"


@pytest.mark.slow
@pytest.mark.timeout(PROCESSES_TIMEOUT)
def test_killed_while_waiting_the_approval_is_abandoned_and_the_resumed_session_runs_it_once(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    """kill -9 while waiting: nothing ran, the sweeper marks the approved call abandoned; the
    session resumed (the CLI asks about the same call again) runs it once, and again runs nothing."""
    env = local_env(sqlite_store)
    agent = subprocess.Popen(
        [sys.executable, str(SCRIPT), str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    try:
        give_up = time.monotonic() + GIVE_UP
        while not (pending := sqlite_store.list_requests(status="pending")):
            assert agent.poll() is None, agent.communicate()[1]
            assert time.monotonic() < give_up, "the agent did not get to ask"
            time.sleep(0.05)
    finally:
        agent.kill()  # SIGKILL: no cleanup, as a crash
        agent.communicate()
    assert agent.returncode == -signal.SIGKILL
    (request,) = pending
    run(sys.executable, "-m", "signoff.cli", "approve", request.id, "--as", "alice", env=env)
    (marked,) = sqlite_store.mark_abandoned_executions(lease=timedelta(0))
    assert marked.request_id == request.id and marked.status.value == "abandoned"
    ledger = Ledger(tmp_path / "ledger.jsonl")
    assert ledger.runs() == []

    resumed = json.loads(run(sys.executable, str(SCRIPT), str(tmp_path), env=env).splitlines()[-1])
    assert resumed == {"seen": [["toolu_01", "sent 5 to bob", False, []], LOOKED_UP], "interrupted": False}
    again = json.loads(run(sys.executable, str(SCRIPT), str(tmp_path), env=env).splitlines()[-1])
    assert again["seen"][0] == ["toolu_01", AGAIN.format(request.id), True, []]
    assert [row["args"] for row in ledger.runs("mcp__pay__transfer")] == [{"amount": 5, "to": "bob"}]
