"""The gate an adapter is built on: the one given, or one over the store the CLI would use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from signoff import Gate, RuleSet, open_backend

RulesGiven = RuleSet | dict[str, Any] | str | Path | None
"""An adapter's `rules=`: a `RuleSet`, its dict, a file path; None: the rules kept in the store."""


def adapter_gate(gate: Gate | None, rules: RulesGiven) -> Gate:
    """`gate`, or `Gate(open_backend(), rules=rules)` (a server when `SIGNOFF_URL` is set); both
    given is an error, since the gate has its rules."""
    if gate is not None:
        if rules is not None:
            raise ValueError("give either gate= or rules=, not both (the gate has its rules)")
        return gate
    return Gate(open_backend(), rules=RuleSet.model_validate(rules) if isinstance(rules, dict) else rules)
