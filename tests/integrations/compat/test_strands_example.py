"""examples/strands_agent.py runs offline and does what it says."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integrations.processes import run_example

pytest.importorskip("strands", reason="strands-agents pins mcp<2.2: tested in the second venv (.venv-compat)")


def test_the_example_pauses_takes_the_edit_and_runs_the_tool_once(tmp_path: Path) -> None:
    out = run_example("strands_agent.py", tmp_path / "signoff.db")
    lines = out.splitlines()
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
