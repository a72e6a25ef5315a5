"""examples/strands_agent.py runs offline and does what it says."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("strands", reason="strands-agents pins mcp<2.2: tested in the second venv (.venv-compat)")

ROOT = Path(__file__).resolve().parents[3]


def test_the_example_pauses_takes_the_edit_and_runs_the_tool_once(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "strands_agent.py"), str(tmp_path / "signoff.db")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "paused: send_email needs approval"
    request_id = lines[1].split()[1]
    shown = [
        "model sees (call-1, success): ['1 new message from alice: lunch?']",
        "model sees (call-2, success): ['The parameters for tool \\'send_email\\' were updated by the user "
        'to:\\n{"to": "alice", "body": "yes, at noon"}\', \'sent to alice\']',
    ]
    assert lines[2:5] == [*shown, "ai: Replied to Alice."]
    assert lines[5:7] == shown  # resumed again from a stale copy of the session: the stored result
    assert lines[-1] == f"send_email ran 1 time(s), idempotency key {request_id}"
