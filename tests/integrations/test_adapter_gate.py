"""`adapter_gate`: the gate every adapter's constructor builds on (the one given, or one over the
store the CLI would open, with the rules given)."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff import Gate, RuleSet, ToolCall
from signoff.integrations._gate import adapter_gate
from signoff.store import SQLiteStore


def test_a_gate_and_rules_together_are_refused(sqlite_store: SQLiteStore) -> None:
    with pytest.raises(ValueError, match="either gate= or rules="):
        adapter_gate(Gate(sqlite_store), RuleSet())
    assert sqlite_store.list_requests() == []


def test_the_gate_given_is_the_one_used(sqlite_store: SQLiteStore) -> None:
    gate = Gate(sqlite_store)
    assert adapter_gate(gate, None) is gate


def test_without_a_gate_the_rules_dict_gates_calls_in_the_cli_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SIGNOFF_URL", raising=False)
    monkeypatch.setenv("SIGNOFF_DB", str(tmp_path / "cli.db"))
    gate = adapter_gate(None, {"tools": {"send_email": {"requires_approval": True}}})
    drafted = gate.draft(ToolCall(name="send_email", args={"to": "bob"}))
    assert drafted is not None
    with SQLiteStore(tmp_path / "cli.db") as store:
        assert [request.id for request in store.list_requests()] == [drafted.id]


def test_a_rules_dict_that_is_not_a_rule_set_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SIGNOFF_URL", raising=False)
    monkeypatch.setenv("SIGNOFF_DB", str(tmp_path / "cli.db"))
    with pytest.raises(ValueError, match="no_such_layer"):
        adapter_gate(None, {"no_such_layer": {}})
