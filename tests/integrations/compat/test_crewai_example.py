"""examples/crewai_agent.py runs offline and does what it says."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("crewai", reason="CrewAI is tested in the second venv: pip install -e '.[dev-compat]'")

ROOT = Path(__file__).resolve().parents[3]


def test_the_example_waits_takes_the_edit_and_runs_the_tool_once(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "crewai_agent.py"), str(tmp_path / "signoff.db")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "waiting: send_email needs approval"
    request_id = lines[1].split()[1]
    assert lines[1:] == [
        f"request {request_id} waits for a person",
        "model sees: 'The parameters for tool \\'send_email\\' were updated by the user to:"
        '\\n{"to": "alice", "body": "yes, at noon"}\\n\\nsent to alice\'',
        "ai: Replied to Alice.",
        f"send_email ran 1 time(s), idempotency key {request_id}",
    ]
