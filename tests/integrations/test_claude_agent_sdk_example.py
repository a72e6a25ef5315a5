"""examples/claude_agent_sdk_agent.py runs offline and does what it says."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integrations.processes import run_example

pytest.importorskip("claude_agent_sdk")


def test_the_example_asks_takes_the_edit_and_runs_the_tool_once(tmp_path: Path) -> None:
    lines = run_example("claude_agent_sdk_agent.py", tmp_path / "s.db", "-W", "error").splitlines()
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
