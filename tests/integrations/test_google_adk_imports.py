"""Importing signoff never imports Google ADK: the adapter loads it only when imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("google.adk")

SRC = str(Path(__file__).resolve().parents[2] / "src")


def loaded_after(statement: str) -> list[str]:
    code = (
        f"import json, sys; {statement}; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('google.adk'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, env={"PYTHONPATH": SRC}
    )
    return list(json.loads(out.stdout))


def test_importing_signoff_imports_no_google_adk() -> None:
    assert loaded_after("import signoff, signoff.integrations") == []


def test_the_adapter_imports_google_adk_when_asked_for() -> None:
    assert "google.adk" in loaded_after("import signoff.integrations.google_adk")
