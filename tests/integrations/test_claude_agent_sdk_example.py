"""examples/claude_agent_sdk_agent.py runs offline and does what it says."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("claude_agent_sdk")

ROOT = Path(__file__).resolve().parents[2]


def test_the_example_asks_takes_the_edit_and_runs_the_tool_once(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-W",
            "error",
            str(ROOT / "examples" / "claude_agent_sdk_agent.py"),
            str(tmp_path / "s.db"),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    inbox = "model sees (toolu_1): 1 new message from alice: lunch?"
    assert lines[0] == inbox
    assert lines[1].startswith("asked: mcp__mail__send_email waits for a person (request ")
    request_id = lines[1].rsplit(" ", 1)[1].rstrip(")")
    assert lines[2:6] == [
        "model sees (toolu_2): sent to alice [The parameters for tool 'mcp__mail__send_email' were updated "
        "by the user to:",
        '{"to": "alice", "body": "yes, at noon"}]',
        "turn ended: success",
        inbox,
    ]
    assert lines[6] == (
        "model sees (toolu_2): denied: This call of mcp__mail__send_email was already handed over to run "
        f"once (signoff request {request_id}); signoff does not run it twice."
    )
    assert lines[7:] == ["turn ended: success", f"send_email ran 1 time(s), for request {request_id}"]
