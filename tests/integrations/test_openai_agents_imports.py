"""Importing signoff never imports the Agents SDK: the adapter loads it only when imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")


def loaded_after(statement: str) -> list[str]:
    code = (
        f"import json, sys; {statement}; "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'agents')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, env={"PYTHONPATH": SRC}
    )
    return list(json.loads(out.stdout))


def test_importing_signoff_imports_no_agents_sdk() -> None:
    assert loaded_after("import signoff, signoff.integrations, signoff.store, signoff.client") == []


def test_the_adapter_imports_the_sdk_when_asked_for() -> None:
    assert "agents.run_state" in loaded_after("import signoff.integrations.openai_agents")
