"""The fail-closed matrix of tests/test_fail_closed.py for the Strands adapter (durable and
waiting), which only this venv can import: a tool named as gated never runs unasked, a rule in
force turns it off, two components on one gate keep their own declarations."""

from __future__ import annotations

import pytest

pytest.importorskip("strands", reason="strands-agents pins mcp<2.2: tested in the second venv (.venv-compat)")

from tests.test_fail_closed import (
    ENTRY_POINTS,
    Attempt,
    test_a_rule_that_turns_the_tool_off,
    test_no_rules_at_all,
    test_rules_that_cover_the_tool,
    test_two_components_sharing_one_gate_with_opposite_declarations,
)

__all__ = [
    "test_a_rule_that_turns_the_tool_off",
    "test_no_rules_at_all",
    "test_rules_that_cover_the_tool",
    "test_two_components_sharing_one_gate_with_opposite_declarations",
]


@pytest.fixture(params=["strands-durable", "strands-waiting"])
def entry(request: pytest.FixtureRequest) -> tuple[str, Attempt]:
    name: str = request.param
    return name, ENTRY_POINTS[name]
