"""Request rules read back from the text the store keeps (their snapshot's JSON), remembered:
most requests carry one of a few rules, and a rule read again costs a lookup instead of its text
parsed. A rule is frozen, so one object may stand for every request that carries it."""

from __future__ import annotations

import json
from functools import lru_cache

from ..rules.effective import RequestRule


@lru_cache(maxsize=512)
def rule_of_text(text: str) -> RequestRule:
    """`RequestRule.from_snapshot(json.loads(text))`."""
    return RequestRule.from_snapshot(json.loads(text))
