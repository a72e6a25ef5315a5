"""The delivery log (where each request was shown or sent) and the counts behind the overview
page and `/metrics`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from .._util import new_id, utcnow
from ..decision_checks import principals_of
from .core import StoreCore
from .listing import audience
from .outbox_ops import Attempt, attempt_of

DeliveryResult = Literal["sent", "failed", "retrying"]


@dataclass(frozen=True, kw_only=True)
class Delivery:
    id: str
    request_id: str
    channel: str
    target: str
    outcome: DeliveryResult
    attempts: int
    detail: str | None
    created_at: datetime
    updated_at: datetime
    history: tuple[Attempt, ...] = ()
    """Each attempt the outbox made on this channel and target, oldest first."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "channel": self.channel,
            "target": self.target,
            "result": self.outcome,
            "attempts": self.attempts,
            "detail": self.detail,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
            "history": [attempt.to_dict() for attempt in self.history],
        }


@dataclass(frozen=True, kw_only=True)
class DecidedRow:
    status: str
    created_at: datetime
    decided_at: datetime

    @property
    def seconds_to_decision(self) -> float:
        return (self.decided_at - self.created_at).total_seconds()


class ReportOps(StoreCore):
    def record_delivery(
        self,
        request_id: str,
        *,
        channel: str,
        target: str,
        result: DeliveryResult,
        detail: str | None = None,
    ) -> None:
        """Note one attempt to show or send a request; a later attempt on the same
        (channel, target) updates the row and counts the attempt."""
        with self._transaction() as (tx, _):
            tx.run(
                "record_delivery",
                id=new_id("dlv"),
                request_id=request_id,
                channel=channel,
                target=target,
                outcome=result,
                detail=detail,
                now=utcnow(),
            )

    def deliveries_for(self, request_id: str) -> list[Delivery]:
        """The request's delivery log: a line per channel and target, with every attempt."""
        with self._read() as tx:
            rows = tx.all("deliveries_for", request_id=request_id)
            tried = tx.all("attempts_for", request_id=request_id)
        history: dict[tuple[str, str], list[Attempt]] = {}
        for row in tried:
            attempt = attempt_of(row)
            history.setdefault((attempt.channel, attempt.target), []).append(attempt)
        return [
            Delivery(**row, history=tuple(history.get((row["channel"], row["target"]), ()))) for row in rows
        ]

    def delivery_counts(self) -> dict[tuple[str, str], int]:
        with self._read() as tx:
            return {(row["channel"], row["outcome"]): int(row["n"]) for row in tx.all("delivery_counts")}

    def status_counts(self) -> dict[str, int]:
        with self._read() as tx:
            return {row["status"]: int(row["n"]) for row in tx.all("status_counts")}

    def execution_counts(self) -> dict[str, int]:
        """How many executions are running, in doubt and abandoned (the others are not counted)."""
        with self._read() as tx:
            return {row["status"]: int(row["n"]) for row in tx.all("execution_counts")}

    def open_counts(self, *, visible_to: str | None = None) -> list[tuple[str, str | None, int]]:
        """(tool, agent, how many) over pending and drafting requests (those `visible_to` may see)."""
        visibility = self._visibility(visible_to)
        with self._read() as tx:
            rows = tx.all("open_counts_by", **audience(visibility["viewer"], visibility["principals"]))
        return [(row["tool_name"], row["agent"], int(row["n"])) for row in rows]

    def decided_since(self, since: timedelta, *, visible_to: str | None = None) -> list[DecidedRow]:
        with self._read() as tx:
            rows = tx.all("decided_since", since=utcnow() - since, **self._visibility(visible_to))
        return [DecidedRow(**row) for row in rows]

    def _visibility(self, user: str | None) -> dict[str, Any]:
        if user is None:
            return {"principals": None, "viewer": None}
        return {"principals": principals_of(user, self.groups_of(user)), "viewer": user}
