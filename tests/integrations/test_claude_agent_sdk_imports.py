"""Importing signoff never imports the Claude Agent SDK: the adapter loads it only when imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("claude_agent_sdk")

SRC = str(Path(__file__).resolve().parents[2] / "src")


def loaded_after(statement: str) -> list[str]:
    code = (
        f"import json, sys; {statement}; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('claude_agent_sdk'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, env={"PYTHONPATH": SRC}
    )
    return list(json.loads(out.stdout))


def test_importing_signoff_imports_no_claude_agent_sdk() -> None:
    assert loaded_after("import signoff, signoff.integrations") == []


def test_the_adapter_imports_the_sdk_when_asked_for() -> None:
    assert "claude_agent_sdk" in loaded_after("import signoff.integrations.claude_agent_sdk")
