"""The rules agents declare in their own code, as a server saw them in their requests.

A gate may declare a tool's rule in code (`@guard(requires_approval=...)`, `register_tool`, a
`RuleSet` given to it) or in its own rules file; the server's rules know nothing of them. Each
request sent with such a rule records it here, one row per (agent's user, tool), so the server's
Rules page can show what its agents declared and when it last saw it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .._util import utcnow
from ..rules.effective import RequestRule
from .core import Json, StoreCore


@dataclass(frozen=True, kw_only=True)
class DeclaredRule:
    created_by: str
    """The agent's user that sent it."""
    tool: str
    agent: str | None
    app: str | None
    rule: RequestRule
    first_seen: datetime
    last_seen: datetime

    def to_dict(self) -> dict[str, Any]:
        return {
            "created_by": self.created_by,
            "tool": self.tool,
            "agent": self.agent,
            "app": self.app,
            "rule": self.rule.snapshot(),
            "first_seen": self.first_seen.isoformat(),
            "last_seen": self.last_seen.isoformat(),
        }


class DeclaredRuleOps(StoreCore):
    def note_declared_rule(
        self, *, created_by: str, tool: str, agent: str | None, app: str | None, rule: RequestRule
    ) -> None:
        """Remember (or refresh) the rule `created_by` declared for `tool`."""
        with self._transaction() as (tx, _):
            tx.run(
                "note_declared_rule",
                created_by=created_by,
                tool=tool,
                agent=agent,
                app=app,
                rule=Json(rule.snapshot()),
                now=utcnow(),
            )

    def declared_rules(self) -> list[DeclaredRule]:
        """Every declared rule seen, by tool."""
        with self._read() as tx:
            return [
                DeclaredRule(
                    created_by=row["created_by"],
                    tool=row["tool"],
                    agent=row["agent"],
                    app=row["app"],
                    rule=RequestRule.from_snapshot(row["rule"]),
                    first_seen=row["created_at"],
                    last_seen=row["updated_at"],
                )
                for row in tx.all("declared_rules")
            ]
