"""Running an adapter's agent as a real process, phase by phase (start, resume, replay), and the
CLI between them: what every durable-resume test does; and a waiting run killed (kill -9) once it
waits, what every crash-while-waiting test does."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def start_phase(script: Path, name: str, folder: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    """Start one phase of an adapter's process script without waiting for it (a waiting run)."""
    return subprocess.Popen(
        [sys.executable, str(script), name, str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


GIVE_UP = 300.0
"""Seconds a test waits for a process to reach a state before failing (a loaded 2-core machine
takes up to a minute to import a framework); a condition is waited on, never a time."""


def kill_when(process: subprocess.Popen[str], ready: Callable[[], bool]) -> None:
    """Kill -9 `process` once `ready()` holds (checked every 50 ms, for `GIVE_UP` seconds at most).
    Fails, with its stderr, if it ends by itself first."""
    give_up = time.monotonic() + GIVE_UP
    try:
        while not ready():
            if process.poll() is not None:
                _, stderr = process.communicate()
                raise AssertionError(f"the process ended ({process.returncode}) before it waited:\n{stderr}")
            assert time.monotonic() < give_up, "the process did not get ready"
            time.sleep(0.05)
    finally:
        process.kill()  # SIGKILL: no cleanup, no finally blocks, as a crash
        process.communicate()
    assert process.returncode == -signal.SIGKILL
