"""Running an adapter's agent as a real process, phase by phase (start, resume, replay), and the
CLI between them: what every durable-resume test does, locally or over a live server (`served`);
a waiting run killed (kill -9) once it waits, what every crash-while-waiting test does; and the
examples, which every example test runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from signoff import Request
from signoff.store import SQLiteStore, Store
from signoff.store.run_state_ops import RunStateRecord
from tests.conftest import url_for
from tests.integrations.ledger import Ledger
from tests.live import LiveServer

SRC = str(Path(__file__).resolve().parents[2] / "src")
"""This checkout's package, for the processes' PYTHONPATH."""
EXAMPLES = Path(SRC).parent / "examples"


def run(*args: str, env: dict[str, str]) -> str:
    """Run a command to its end; its stdout (a failure shows its stderr)."""
    done = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def run_example(name: str, db: Path, *flags: str) -> str:
    """Run examples/`name` (offline: no model key) over a store at `db`, Python given `flags`;
    its stdout (a failure shows its stderr)."""
    env = {**os.environ, "PYTHONPATH": SRC}
    env.pop("OPENAI_API_KEY", None)
    return run(sys.executable, *flags, str(EXAMPLES / name), str(db), env=env)


def run_phase(script: Path, name: str, folder: Path, env: dict[str, str]) -> dict[str, Any]:
    """Run one phase of an adapter's process script; the JSON it prints last."""
    out: dict[str, Any] = json.loads(
        run(sys.executable, str(script), name, str(folder), env=env).splitlines()[-1]
    )
    return out


def local_env(store: Store | Path) -> dict[str, str]:
    """The environment of an adapter's process over `store` (as the CLI opens it; a Path: a
    SQLite file), and nothing else that could reach a store, a server or a model elsewhere."""
    env = {
        **os.environ,
        "PYTHONPATH": SRC,
        "SIGNOFF_DB": str(store) if isinstance(store, Path) else url_for(store),
    }
    for name in ("SIGNOFF_URL", "OPENAI_API_KEY", "LC_GRAPH_DSN"):
        env.pop(name, None)
    return env


WAITING_THREAD = "nightly-1"
"""The thread every process script runs on."""

PROCESSES_TIMEOUT = 480
"""Five Python processes, each importing the framework: on a loaded 2-core machine each one
takes up to a minute, past the suite's default 120 s."""

Env = dict[str, str]


@contextmanager
def served(
    store: SQLiteStore, folder: Path, agent: str = "pay-agent", thread: str = WAITING_THREAD
) -> Iterator[tuple[Env, Env]]:
    """A live server over `store`: the environments of the agent's processes (`agent`'s token)
    and of the person's (alice's). After the block: the one request on `thread` was made by
    `agent` and decided by alice, and the store file the URL overrides was never written."""
    with LiveServer(store) as server:
        base = {**os.environ, "PYTHONPATH": SRC, "SIGNOFF_URL": server.url}
        base["SIGNOFF_DB"] = str(folder / "unused.db")  # the URL wins: nothing may be written here
        base.pop("OPENAI_API_KEY", None)  # nothing may need it: the models are scripted
        agent_env = {**base, "SIGNOFF_TOKEN": server.user(agent, role="agent")}
        person_env = {**base, "SIGNOFF_TOKEN": server.user("alice", role="member")}
        yield agent_env, person_env
        (request,) = store.list_requests(thread_id=thread)
        assert request.created_by == agent and request.decision is not None
        assert request.decision.actor == "alice"
    assert not (folder / "unused.db").exists()


def approve_with_cli(request_id: str, env: Env) -> None:
    """`signoff approve` from another process, as alice (over a server: by her token)."""
    command = [sys.executable, "-m", "signoff.cli", "approve", request_id]
    if "SIGNOFF_URL" not in env:
        command += ["--as", "alice"]
    run(*command, env=env)


def start_approve_resume(
    script: Path, folder: Path, agent_env: Env, person_env: Env, *, seen: list[Any], finished: str
) -> dict[str, Any]:
    """A session-keeping adapter's process script: start (pauses, exits), resume undecided (still
    paused), approve with the CLI, resume (the model sees `seen`), replay from a stale session
    (the same, nothing runs again), resume once more (fails: `finished`). The gated tool runs
    once. What the start phase printed."""
    ledger = Ledger(folder / "ledger.jsonl")
    phase = partial(run_phase, script)

    started = phase("start", folder, agent_env)
    assert started["paused"] is True and started["seen"] == []
    (waiting,) = started["waiting"]
    assert [row["tool"] for row in ledger.runs()] == ["lookup"]  # the ungated call ran in its turn

    undecided = phase("resume", folder, agent_env)
    assert undecided == {"paused": True, "waiting": [waiting], "text": None, "seen": []}

    approve_with_cli(waiting, person_env)

    resumed = phase("resume", folder, agent_env)
    assert resumed == {"paused": False, "waiting": [], "text": "done", "seen": seen}
    assert [(row["tool"], row["key"]) for row in ledger.runs()] == [("lookup", None), ("transfer", waiting)]

    replayed = phase("replay", folder, agent_env)
    assert replayed == resumed
    assert len(ledger.runs("transfer")) == 1  # signoff's execution record, not the session, says it ran

    with pytest.raises(AssertionError, match=finished):
        phase("resume", folder, agent_env)
    return started


def kill_while_waiting(
    script: Path, folder: Path, store: Store, *, resumable: Callable[[], bool] | None = None
) -> Request:
    """Run `script`'s `wait` phase and kill -9 it once its request is pending and the run can be
    resumed (`resumable()`; by default: a run state is kept in `store`); its request."""

    def waiting() -> bool:
        if not store.list_requests(thread_id=WAITING_THREAD, status="pending"):
            return False
        return resumable() if resumable is not None else store.load_run_state(WAITING_THREAD) is not None

    process = subprocess.Popen(
        [sys.executable, str(script), "wait", str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=local_env(store),
    )
    give_up = time.monotonic() + GIVE_UP
    try:
        while not waiting():
            if process.poll() is not None:
                _, stderr = process.communicate()
                raise AssertionError(f"the process ended ({process.returncode}) before it waited:\n{stderr}")
            assert time.monotonic() < give_up, "the process did not get to wait"
            time.sleep(0.05)
    finally:
        process.kill()  # SIGKILL: no cleanup, no finally blocks, as a crash
        process.communicate()
    assert process.returncode == -signal.SIGKILL
    (request,) = store.list_requests(thread_id=WAITING_THREAD)
    return request


GIVE_UP = 300.0
"""Seconds a test waits for a process to reach a state before failing (a loaded 2-core machine
takes up to a minute to import a framework); a condition is waited on, never a time."""


def kill_while_kept(script: Path, folder: Path, store: Store, kind: str) -> tuple[Request, RunStateRecord]:
    """`kill_while_waiting` for an adapter that keeps its run in the store (of `kind`): the
    request, and the run state kept before the process waited."""
    request = kill_while_waiting(script, folder, store)
    kept = store.load_run_state(WAITING_THREAD)
    assert kept is not None and kept.kind == kind
    return request, kept


def resume_again(
    script: Path, phase: str, folder: Path, store: Store, kept: RunStateRecord, framework: str
) -> dict[str, Any]:
    """After a resumed run ended: resuming it again finds nothing kept (and runs nothing); then
    the state kept while the killed process waited is put back and resumed once more (as if the
    resuming process had died before forgetting it). What that last phase printed."""
    with pytest.raises(AssertionError, match=f"no paused {framework} run is kept"):
        run_phase(script, phase, folder, local_env(store))
    store.save_run_state(WAITING_THREAD, kept.state, kind=kept.kind)
    return run_phase(script, phase, folder, local_env(store))
