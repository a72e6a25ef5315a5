"""Running an adapter's agent as a real process, phase by phase (start, resume, replay), and the
CLI between them: what every durable-resume test does; and a waiting run killed (kill -9) once it
waits, what every crash-while-waiting test does."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from signoff import Request
from signoff.store import Store
from signoff.store.run_state_ops import RunStateRecord
from tests.conftest import url_for

SRC = str(Path(__file__).resolve().parents[2] / "src")
"""This checkout's package, for the processes' PYTHONPATH."""


def run(*args: str, env: dict[str, str]) -> str:
    """Run a command to its end; its stdout (a failure shows its stderr)."""
    done = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def run_phase(script: Path, name: str, folder: Path, env: dict[str, str]) -> dict[str, Any]:
    """Run one phase of an adapter's process script; the JSON it prints last."""
    out: dict[str, Any] = json.loads(
        run(sys.executable, str(script), name, str(folder), env=env).splitlines()[-1]
    )
    return out


def local_env(store: Store) -> dict[str, str]:
    """The environment of an adapter's process over `store` (as the CLI opens it), and nothing
    else that could reach a store, a server or a model elsewhere."""
    env = {**os.environ, "PYTHONPATH": SRC, "SIGNOFF_DB": url_for(store)}
    for name in ("SIGNOFF_URL", "OPENAI_API_KEY", "LC_GRAPH_DSN"):
        env.pop(name, None)
    return env


WAITING_THREAD = "nightly-1"
"""The thread every process script runs on."""


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
