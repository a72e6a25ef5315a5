"""examples/crewai_agent.py runs offline and does what it says."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integrations.processes import run_example

pytest.importorskip("crewai", reason="CrewAI is tested in the second venv: pip install -e '.[dev-compat]'")


def test_the_example_waits_takes_the_edit_and_runs_the_tool_once(tmp_path: Path) -> None:
    out = run_example("crewai_agent.py", tmp_path / "signoff.db")
    lines = out.splitlines()
    assert lines[0] == "waiting: send_email needs approval"
    request_id = lines[1].split()[1]
    assert lines[1:] == [
        f"request {request_id} waits for a person",
        "model sees: 'The parameters for tool \\'send_email\\' were updated by the user to:"
        '\\n{"to": "alice", "body": "yes, at noon"}\\n\\nsent to alice\'',
        "ai: Replied to Alice.",
        f"send_email ran 1 time(s), idempotency key {request_id}",
    ]
