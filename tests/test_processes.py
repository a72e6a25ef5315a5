"""Across processes, on SQLite and PostgreSQL: restarts, replays, races and dead workers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from signoff import Approve, ExecutionStatus, Gate, RequestStatus, RuleSet, Scope, Store
from signoff._util import utcnow
from tests.conftest import url_for
from tests.helpers import decided_digest

ROOT = Path(__file__).resolve().parent.parent
AGENT = [sys.executable, "-m", "tests.scripts.agent"]
DECIDE = [sys.executable, "-m", "tests.scripts.decide"]
pytestmark = pytest.mark.slow


def run_agent(store: Store, thread: str, log: Path, mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*AGENT, url_for(store), thread, str(log), mode],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        check=False,
    )


def test_a_decision_made_while_the_agent_was_down_is_found_on_replay(store: Store, tmp_path: Path) -> None:
    log = tmp_path / "tool.log"
    first = run_agent(store, "run-1", log, "suspend")
    assert first.returncode == 3, first.stderr
    request_id = first.stdout.split()[1]
    assert store.get_request(request_id).status is RequestStatus.PENDING

    store.decide(request_id, Approve(), actor="alice")  # the agent's process is gone meanwhile

    second = run_agent(store, "run-1", log, "suspend")
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "REPLY replayed=False charged cus_42 1999"
    assert [r.id for r in store.list_requests(thread_id="run-1")] == [request_id]
    assert log.read_text().splitlines() == ["ran cus_42 1999"]

    third = run_agent(store, "run-1", log, "block")
    assert third.stdout.strip() == "REPLY replayed=True charged cus_42 1999"
    assert log.read_text().splitlines() == ["ran cus_42 1999"], "the tool ran twice"
    execution = store.get_execution(request_id)
    assert execution is not None and execution.status is ExecutionStatus.SUCCEEDED and execution.attempts == 1


def start_slow_agent(store: Store, thread: str, log: Path) -> subprocess.Popen[str]:
    agent = subprocess.Popen(
        [*AGENT, url_for(store), thread, str(log), "slow"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        pending = store.list_requests(thread_id=thread, status="pending")
        if pending:
            store.decide(pending[0].id, Approve(), actor="alice")
        if log.exists() and log.read_text():
            return agent
        time.sleep(0.01)
    agent.kill()
    raise AssertionError("the agent never started its tool")


def test_a_killed_running_execution_becomes_in_doubt_and_is_not_rerun(store: Store, tmp_path: Path) -> None:
    log = tmp_path / "tool.log"
    agent = start_slow_agent(store, "run-kill", log)
    os.kill(agent.pid, signal.SIGKILL)
    agent.wait(10)
    [request] = store.list_requests(thread_id="run-kill")
    running = store.get_execution(request.id)
    assert running is not None and running.status is ExecutionStatus.RUNNING

    replay = run_agent(store, "run-kill", log, "block")
    assert replay.returncode == 4, replay.stdout + replay.stderr
    assert "may or may not have taken effect" in replay.stdout
    assert log.read_text().splitlines() == ["ran cus_42 1999"], "an in-doubt call must not run again"
    in_doubt = store.get_execution(request.id)
    assert in_doubt is not None and in_doubt.status is ExecutionStatus.IN_DOUBT
    assert "execution.in_doubt" in [entry.action for entry in store.audit_entries(request_id=request.id)]

    store.reset_execution(request.id, actor="alice")
    rerun = run_agent(store, "run-kill", log, "block")
    assert rerun.stdout.strip() == "REPLY replayed=False charged cus_42 1999"
    assert len(log.read_text().splitlines()) == 2


def test_an_idempotent_tool_is_rerun_after_its_process_died(store: Store, tmp_path: Path) -> None:
    log = tmp_path / "tool.log"
    agent = start_slow_agent(store, "run-idem", log)
    os.kill(agent.pid, signal.SIGKILL)
    agent.wait(10)
    replay = run_agent(store, "run-idem", log, "idempotent")
    assert replay.stdout.strip() == "REPLY replayed=False charged cus_42 1999"
    [request] = store.list_requests(thread_id="run-idem")
    execution = store.get_execution(request.id)
    assert execution is not None and execution.status is ExecutionStatus.SUCCEEDED and execution.attempts == 2


def test_a_live_claim_is_not_taken_over(store: Store, tmp_path: Path) -> None:
    log = tmp_path / "tool.log"
    agent = start_slow_agent(store, "run-live", log)
    try:
        gate = Gate(store, rules=RuleSet.from_yaml("tools: {charge_card: {requires_approval: true}}"))
        [request] = store.list_requests(thread_id="run-live")
        claim = store.claim_execution(
            request.id, args_digest=decided_digest(store, request.id), lease=gate.lease
        )
        assert claim.kind == "busy"
    finally:
        agent.kill()
        agent.wait(10)


@pytest.mark.parametrize("deciders", [2, 4])
def test_processes_deciding_at_once_exactly_one_wins(store: Store, tmp_path: Path, deciders: int) -> None:
    gate = Gate(store, rules=RuleSet.from_yaml("tools: {wire: {requires_approval: true}}"))
    from signoff import ToolCall

    pending = gate.submit(ToolCall(name="wire", args={"cents": 1}, id="w1"), Scope(thread_id="race"))
    request_id = pending.request_id  # type: ignore[union-attr]
    go = tmp_path / "go"
    processes = [
        subprocess.Popen(
            [*DECIDE, url_for(store), request_id, f"actor{n}", str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for n in range(deciders)
    ]
    time.sleep(1.0)  # let every process open the store and wait for the start signal
    go.touch()
    outputs = [process.communicate(timeout=60) for process in processes]
    results = [out.strip() for out, _ in outputs]
    assert results.count("WON") == 1, outputs
    assert all(r == "WON" or r.startswith("LOST AlreadyDecided") for r in results), outputs
    assert len(store.decisions(request_id)) == 1
    decided = [
        entry for entry in store.audit_entries(request_id=request_id) if entry.action == "request.decided"
    ]
    assert len(decided) == 1
    assert store.get_request(request_id).decided_at is not None
    assert store.get_request(request_id).decided_at <= utcnow()  # type: ignore[operator]
