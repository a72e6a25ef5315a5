"""Importing signoff never imports Strands: the adapter loads it only when imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("strands", reason="strands-agents pins mcp<2.2: tested in the second venv (.venv-compat)")

SRC = str(Path(__file__).resolve().parents[3] / "src")


def loaded_after(statement: str) -> list[str]:
    code = (
        f"import json, sys; {statement}; "
        "print(json.dumps(sorted(m for m in sys.modules if m == 'strands' or m.startswith('strands.'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, env={"PYTHONPATH": SRC}
    )
    return list(json.loads(out.stdout))


def test_importing_signoff_imports_no_strands() -> None:
    assert loaded_after("import signoff, signoff.integrations") == []


def test_the_adapter_imports_strands_when_asked_for() -> None:
    assert "strands" in loaded_after("import signoff.integrations.strands")
