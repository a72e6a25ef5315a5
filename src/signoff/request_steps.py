"""A request's planned reminders and escalations (DESIGN §14): planned from its rule when it is
made, kept with it in the store, run by the server's sweeper once due (`Store.run_due_steps`).

Each step is planned at its moment (`schedule.step_at`); one that would fall at or after
the deadline is not planned. When the sweeper comes late (the server was down), every due
escalation still runs, in order, but of the due reminders only the latest is sent: the others
are `superseded` (nobody wants three reminders at once). A request that has ended gets none of
its remaining steps (they are `skipped` when they come due)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, TypeAlias

from ._util import format_moment, from_iso, to_iso
from .rules.effective import RequestRule
from .rules.schedule import step_at

StepKind: TypeAlias = Literal["remind", "escalate"]
StepOutcome: TypeAlias = Literal["done", "superseded", "skipped"]


@dataclass(frozen=True, kw_only=True)
class RequestStep:
    """One planned reminder (`payload: {"at": "30m"}`) or escalation (`{"after": "4h", "to":
    [...]}`); `done_at` and `outcome` once the sweeper has run it."""

    id: int
    request_id: str
    kind: StepKind
    due_at: datetime
    payload: dict[str, Any]
    done_at: datetime | None = None
    outcome: StepOutcome | None = None

    @property
    def to(self) -> tuple[str, ...]:
        """Whom an escalation adds."""
        return tuple(self.payload.get("to", ()))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "due_at": to_iso(self.due_at),
            **self.payload,
            "done_at": to_iso(self.done_at) if self.done_at is not None else None,
            "outcome": self.outcome,
        }


def step_from_dict(request_id: str, data: dict[str, Any]) -> RequestStep:
    """A step as `RequestStep.to_dict` gave it (a server's answer: `GET /v1/requests/{id}`)."""
    done_at = data.get("done_at")
    return RequestStep(
        id=int(data.get("id") or 0),  # 0: from a server that did not say
        request_id=request_id,
        kind=data["kind"],
        due_at=from_iso(data["due_at"]),
        payload={key: value for key, value in data.items() if key not in _STEP_FIELDS},
        done_at=from_iso(done_at) if done_at else None,
        outcome=data.get("outcome"),
    )


_STEP_FIELDS = frozenset({"id", "kind", "due_at", "done_at", "outcome"})


def request_step(row: dict[str, Any]) -> RequestStep:
    return RequestStep(
        id=int(row["id"]),
        request_id=row["request_id"],
        kind=row["kind"],
        due_at=row["due_at"],
        payload=dict(row["payload"]),
        done_at=row["done_at"],
        outcome=row["outcome"],
    )


def plan_steps(rule: RequestRule, created: datetime, deadline: datetime) -> list[dict[str, Any]]:
    """The steps to store with a new request (`insert_step`'s parameters), in time order."""
    planned: list[tuple[datetime, dict[str, Any]]] = []
    for spec in rule.remind:
        planned.append((step_at(spec, created, deadline), {"kind": "remind", "payload": {"at": spec}}))
    for escalation in rule.escalate:
        due = step_at(escalation.after, created, deadline)
        planned.append((due, {"kind": "escalate", "payload": escalation.to_dict()}))
    planned.sort(key=lambda item: item[0])
    return [{**step, "due_at": to_iso(due)} for due, step in planned if due < deadline]


def steps_summary(steps: list[RequestStep]) -> str | None:
    """In words, for the request page and the CLI: 'reminded 2×, escalated to group:oncall at
    2025-06-01 14:02:00 UTC; next: a reminder at …'. None when the request has no steps."""
    if not steps:
        return None
    parts: list[str] = []
    reminded = sum(1 for step in steps if step.kind == "remind" and step.outcome == "done")
    if reminded:
        parts.append(f"reminded {reminded}×")
    for step in steps:
        if step.kind == "escalate" and step.outcome == "done" and step.done_at is not None:
            parts.append(f"escalated to {', '.join(step.to)} at {format_moment(step.done_at)}")
    upcoming = next((step for step in steps if step.done_at is None), None)
    said = ", ".join(parts) if parts else "no reminder or escalation yet"
    if upcoming is None:
        return said
    what = "a reminder" if upcoming.kind == "remind" else f"escalation to {', '.join(upcoming.to)}"
    return f"{said}; next: {what} at {format_moment(upcoming.due_at)}"
