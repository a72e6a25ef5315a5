"""examples/haystack_agent.py runs offline and does what it says."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("haystack")

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_example_pauses_takes_the_edit_and_runs_the_tool_once(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "haystack_agent.py"), str(tmp_path / "signoff.db")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "paused: awaiting_approval"
    request_id = lines[1].split()[1]
    assert lines[1] == f"request: {request_id} send_email {{'to': 'alice', 'body': 'yes'}}"
    assert lines[2:] == [
        "user: Answer Alice",
        "user: The parameters for tool 'send_email' were updated by the user to:",
        "{'to': 'alice', 'body': 'yes, at noon'}",
        "tool: 1 new message from alice: 'lunch?'",
        "tool: sent to alice",
        "assistant: Replied to Alice.",
        f"send_email ran 1 time(s), idempotency key {request_id}",
    ]
