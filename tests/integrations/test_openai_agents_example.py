"""examples/openai_agents_agent.py runs offline and does what it says."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("agents")

ROOT = Path(__file__).resolve().parents[2]


def test_the_example_pauses_takes_the_edit_and_runs_the_tool_once(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("OPENAI_API_KEY", None)
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "openai_agents_agent.py"), str(tmp_path / "signoff.db")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "paused: Email alice?"
    request_id = lines[1].split()[1]
    assert lines[2:] == [
        "tool call_1: 1 message from alice: lunch?",
        "tool call_2: The parameters for tool 'send_email' were updated by the user to:",
        '{"to": "alice", "body": "yes, at noon"} With user feedback: say when',
        "",
        "sent to alice",
        "ai: Replied to Alice.",
        f"send_email ran 1 time(s), idempotency key {request_id}",
    ]
