"""Running an adapter's agent as a real process, phase by phase (start, resume, replay), and the
CLI between them: what every durable-resume test does."""

from __future__ import annotations

import json
import subprocess
import sys
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
