"""examples/pydantic_ai_agent.py runs offline and does what it says."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integrations.processes import run_example

pytest.importorskip("pydantic_ai")


def test_the_example_defers_takes_the_edit_and_runs_the_tool_once(tmp_path: Path) -> None:
    out = run_example("pydantic_ai_agent.py", tmp_path / "signoff.db")
    lines = out.splitlines()
    assert lines[0] == "paused: Tool execution requires approval"
    request_id = lines[1].split()[1]
    assert lines[2:7] == [
        "model sees (tool-return): 1 new message from alice: lunch?",
        "model sees (tool-return): The parameters for tool 'send_email' were updated by the user to:",
        '{"to": "alice", "body": "yes, at noon"}',
        "",
        "sent to alice",
    ]
    assert "ai: Replied to Alice." in lines
    assert lines[-1] == f"send_email ran 1 time(s), idempotency key {request_id}"
