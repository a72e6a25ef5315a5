"""Request rules read back from the text the store keeps (their snapshot's JSON), remembered:
most requests carry one of a few rules, and a rule read again costs a dictionary lookup instead
of its text parsed. A rule is frozen, so one object may stand for every request that carries it."""

from __future__ import annotations

import json

from ..rules.model import RequestRule

MAX_RULES = 512
"""Rules remembered; past that the memory starts again (a store with more rules than
this in use only loses the shortcut)."""

_rules: dict[str, RequestRule] = {}


def rule_of_text(text: str) -> RequestRule:
    """`RequestRule.from_snapshot(json.loads(text))`."""
    rule = _rules.get(text)
    if rule is None:
        rule = RequestRule.from_snapshot(json.loads(text))
        if len(_rules) >= MAX_RULES:
            _rules.clear()
        _rules[text] = rule
    return rule
