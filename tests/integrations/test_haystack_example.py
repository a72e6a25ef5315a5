"""examples/haystack_agent.py runs offline and does what it says."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integrations.processes import run_example

pytest.importorskip("haystack")


@pytest.mark.slow
def test_the_example_pauses_takes_the_edit_and_runs_the_tool_once(tmp_path: Path) -> None:
    out = run_example("haystack_agent.py", tmp_path / "signoff.db")
    lines = out.splitlines()
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
