"""Recorded calls replayed through proposed rules (`signoff rules preview FILE --days N`): for each
call, its answer under the rules in force and under the proposed ones, and what changed: newly
asked, no longer asked, asked of other people (approvers, quorum) or with another deadline or
`on_expire`.

The calls are those the store recorded: the requests (calls that were asked about) and the
shadow hits of calls that ran unasked (`newly_asked`); a call that ran unasked while no shadow
would have asked about it was not recorded, so it cannot be replayed. The rules are resolved as
stored: what agents declared in their own code is not known here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from .preview import outcome_sentence

if TYPE_CHECKING:
    from .explanation import Explanation
    from .resolve import Resolver

Change = Literal["newly_asked", "no_longer_asked", "other_approvers", "other_deadline", "unchanged"]
CHANGES: tuple[Change, ...] = (
    "newly_asked",
    "no_longer_asked",
    "other_approvers",
    "other_deadline",
    "unchanged",
)
EXAMPLES = 5
"""Calls shown per kind of change."""


@dataclass(frozen=True, kw_only=True)
class RecordedCall:
    tool: str
    agent: str | None
    app: str | None
    requester: str | None
    args: dict[str, Any]
    at: datetime
    source: Literal["request", "shadow_hit"]


@dataclass(frozen=True, kw_only=True)
class ReplayedCall:
    call: RecordedCall
    change: Change
    in_force: str
    proposed: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.call.tool,
            "agent": self.call.agent,
            "app": self.call.app,
            "requester": self.call.requester,
            "args": self.call.args,
            "at": self.call.at.isoformat(),
            "source": self.call.source,
            "change": self.change,
            "in_force": self.in_force,
            "proposed": self.proposed,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReplayedCall:
        call = RecordedCall(
            tool=str(data["tool"]),
            agent=data.get("agent"),
            app=data.get("app"),
            requester=data.get("requester"),
            args=dict(data.get("args") or {}),
            at=datetime.fromisoformat(data["at"]),
            source=data["source"],
        )
        return cls(
            call=call, change=data["change"], in_force=str(data["in_force"]), proposed=str(data["proposed"])
        )


@dataclass
class ReplayReport:
    since: datetime
    calls: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CHANGES, 0))
    examples: dict[str, list[ReplayedCall]] = field(default_factory=dict)
    unreadable: int = 0
    """Calls whose rules could not be resolved (a `when` that failed on their args)."""

    @property
    def changed(self) -> int:
        return self.calls - self.counts["unchanged"] - self.unreadable

    def to_dict(self) -> dict[str, Any]:
        return {
            "since": self.since.isoformat(),
            "calls": self.calls,
            "changed": self.changed,
            "counts": dict(self.counts),
            "unreadable": self.unreadable,
            "examples": {kind: [item.to_dict() for item in items] for kind, items in self.examples.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReplayReport:
        return cls(
            since=datetime.fromisoformat(data["since"]),
            calls=int(data["calls"]),
            counts={kind: int(data["counts"].get(kind, 0)) for kind in CHANGES},
            examples={
                kind: [ReplayedCall.from_dict(item) for item in items]
                for kind, items in (data.get("examples") or {}).items()
            },
            unreadable=int(data.get("unreadable", 0)),
        )


def change_between(before: Explanation, after: Explanation) -> Change:
    if before.ask != after.ask:
        return "newly_asked" if after.ask else "no_longer_asked"
    if not before.ask:
        return "unchanged"
    old, new = before.rule, after.rule
    if (sorted(old.approvers), old.quorum) != (sorted(new.approvers), new.quorum):
        return "other_approvers"
    if (old.deadline, old.on_expire) != (new.deadline, new.on_expire):
        return "other_deadline"
    return "unchanged"


def replay(
    calls: Iterable[RecordedCall], in_force: Resolver, proposed: Resolver, *, since: datetime
) -> ReplayReport:
    report = ReplayReport(since=since)
    for call in calls:
        report.calls += 1
        try:
            before = _explain(in_force, call)
            after = _explain(proposed, call)
        except Exception:
            report.unreadable += 1
            continue
        change = change_between(before, after)
        report.counts[change] += 1
        shown = report.examples.setdefault(change, []) if change != "unchanged" else None
        if shown is not None and len(shown) < EXAMPLES:
            shown.append(
                ReplayedCall(
                    call=call,
                    change=change,
                    in_force=outcome_sentence(before, call.requester),
                    proposed=outcome_sentence(after, call.requester),
                )
            )
    return report


def recorded_call(row: Mapping[str, Any]) -> RecordedCall:
    """A `recent_tool_requests` row."""
    return RecordedCall(
        tool=str(row["tool_name"]),
        agent=row["agent"],
        app=row["app"],
        requester=row["requester"],
        args=dict(row["args"] or {}),
        at=row["created_at"],
        source="request",
    )


def _explain(resolver: Resolver, call: RecordedCall) -> Explanation:
    return resolver.explain(call.tool, call.agent, call.app, call.args, call.requester)
