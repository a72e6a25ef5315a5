"""What a proposed rule set would change, before it is applied: the entries that differ, the
YAML diff, and for a sample call the answer under the rules in force and under the proposed
ones, side by side, each said in one sentence ("`send_email` by `support-bot` in `prod` would
ask alice, 24h, then reject.").

Nothing here is stored: the proposed rules are resolved as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._util import format_duration
from .effective import separation_words
from .history import LayerChange, layer_changes, rules_diff

if TYPE_CHECKING:
    from .model import RuleSet
    from .resolve import Explanation


@dataclass(frozen=True, kw_only=True)
class SampleCall:
    """A call to explain: as an agent would make it."""

    tool: str
    agent: str | None = None
    app: str | None = None
    requester: str | None = None
    args: dict[str, Any] | None = None

    def explain(self, rules: RuleSet) -> Explanation:
        from .resolve import Resolver  # with the rule files' models (pydantic), when a call is explained

        return Resolver(rules).explain(self.tool, self.agent, self.app, self.args, self.requester)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "agent": self.agent,
            "app": self.app,
            "requester": self.requester,
            "args": self.args,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SampleCall:
        return cls(
            tool=data["tool"],
            agent=data.get("agent"),
            app=data.get("app"),
            requester=data.get("requester"),
            args=data.get("args"),
        )


def outcome_sentence(explanation: Explanation, requester: str | None = None) -> str:
    """The answer for one call, in one sentence a person reads."""
    call = f"`{explanation.tool}`"
    if explanation.agent:
        call += f" by `{explanation.agent}`"
    if explanation.app:
        call += f" in `{explanation.app}`"
    if requester:
        call += f" for `{requester}`"
    if not explanation.ask:
        return f"{call} would run without asking ({explanation.layer} says so)."
    rule = explanation.rule
    who = ", ".join(rule.approvers) if rule.approvers else "any person"
    if rule.quorum > 1:
        who += f" ({rule.quorum} of them)"
    if rule.separation is not None:
        who += f" ({separation_words(rule.separation)})"
    decisions = ", ".join(explanation.allowed_decisions)
    return f"{call} would ask {who} ({decisions}), {format_duration(rule.deadline)}, then {rule.on_expire}."


@dataclass(frozen=True, kw_only=True)
class SampleOutcome:
    """A sample call's answer under the rules in force and under the proposed ones: each an
    explanation's JSON (`Explanation.to_dict`) with its `sentence`."""

    call: SampleCall
    in_force: dict[str, Any]
    proposed: dict[str, Any]

    @property
    def differs(self) -> bool:
        return self.in_force != self.proposed

    def to_dict(self) -> dict[str, Any]:
        return {
            "call": self.call.to_dict(),
            "in_force": self.in_force,
            "proposed": self.proposed,
            "differs": self.differs,
        }

    @classmethod
    def explain(cls, call: SampleCall, in_force: RuleSet, proposed: RuleSet) -> SampleOutcome:
        return cls(
            call=call,
            in_force=_explained(call, call.explain(in_force)),
            proposed=_explained(call, call.explain(proposed)),
        )


@dataclass(frozen=True, kw_only=True)
class RulesPreview:
    version: int
    """The version of the rules in force it was compared with: apply with it, so that a change
    made meanwhile by someone else is not overwritten unseen."""
    changes: list[LayerChange]
    diff: str
    sample: SampleOutcome | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "changes": [change.to_dict() for change in self.changes],
            "diff": self.diff,
            "sample": self.sample.to_dict() if self.sample is not None else None,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RulesPreview:
        sample = data.get("sample")
        return cls(
            version=int(data["version"]),
            changes=[LayerChange.from_dict(item) for item in data["changes"]],
            diff=str(data["diff"]),
            sample=SampleOutcome(
                call=SampleCall.from_dict(sample["call"]),
                in_force=sample["in_force"],
                proposed=sample["proposed"],
            )
            if sample
            else None,
        )


def preview_rules(
    in_force: RuleSet, version: int, proposed: RuleSet, sample: SampleCall | None = None
) -> RulesPreview:
    return RulesPreview(
        version=version,
        changes=layer_changes(in_force.to_dict(), proposed.to_dict()),
        diff=rules_diff(in_force, proposed),
        sample=SampleOutcome.explain(sample, in_force, proposed) if sample is not None else None,
    )


def _explained(call: SampleCall, explanation: Explanation) -> dict[str, Any]:
    return {**explanation.to_dict(), "sentence": outcome_sentence(explanation, call.requester)}
