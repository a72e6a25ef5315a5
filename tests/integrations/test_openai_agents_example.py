"""examples/openai_agents_agent.py runs offline and does what it says."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integrations.processes import run_example

pytest.importorskip("agents")


def test_the_example_pauses_takes_the_edit_and_runs_the_tool_once(tmp_path: Path) -> None:
    lines = run_example("openai_agents_agent.py", tmp_path / "signoff.db").splitlines()
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
