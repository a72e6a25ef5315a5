"""The answer for one call and the trace of which layer said so (`Resolver.explain`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .callables import shown
from .effective import Rule, separation_words, who_decides


@dataclass(frozen=True)
class TraceStep:
    layer: str
    key: str | None
    said: str

    def to_dict(self) -> dict[str, Any]:
        return {"layer": self.layer, "key": self.key, "said": self.said}


@dataclass(frozen=True)
class Explanation:
    """The answer for one call and why."""

    tool: str
    agent: str | None
    app: str | None
    ask: bool
    layer: str
    """The layer whose word decided: tool, service, agent, app, agent.hitl_disabled,
    app.hitl_disabled, app.hitl_required, when, or default."""
    rule: Rule
    trace: tuple[TraceStep, ...] = field(default=())
    read_only_exempt: bool = False
    """The service's `unless_read_only` mode has the last word: a tool marked read-only is not asked."""

    @property
    def allowed_decisions(self) -> tuple[str, ...]:
        return self.rule.allowed_decisions if self.ask else ()

    @property
    def deciding_key(self) -> str | None:
        """The key of the entry whose word decided (`send_email`, `github.*`, an app's name)."""
        for step in reversed(self.trace):
            if step.layer == self.layer:
                return step.key
        return None

    def who_decides(self, requester: str | None = None) -> str:
        """Who may decide the call's request, in words (for a call made for `requester`)."""
        return who_decides(self.rule.approvers, requester, self.rule.separation)

    def to_dict(self, requester: str | None = None) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "agent": self.agent,
            "app": self.app,
            "ask": self.ask,
            "allowed_decisions": list(self.allowed_decisions),
            "layer": self.layer,
            "trace": [step.to_dict() for step in self.trace],
            "description": shown(self.rule.description) if self.ask else None,
            "approvers": list(self.rule.approvers),
            "who_decides": self.who_decides(requester) if self.ask else None,
            "channels": list(self.rule.channels),
            "quorum": self.rule.quorum,
            "separation": self.rule.separation,
            "four_eyes": separation_words(self.rule.separation) if self.ask else None,
            "deadline_seconds": self.rule.deadline.total_seconds(),
            "on_expire": self.rule.on_expire,
            "when": shown(self.rule.when),
            "batch": self.rule.batch,
            "max_grant_seconds": self.rule.max_grant.total_seconds() if self.rule.max_grant else None,
            "remind": list(self.rule.remind),
            "escalate": [escalation.to_dict() for escalation in self.rule.escalate],
        }
