"""Ending open requests without a decision: expiry at the deadline (the waiter's or the
sweeper's), and cancelling (the agent aborted its run)."""

from __future__ import annotations

from datetime import datetime

from .._util import to_iso, utcnow
from ..decision_checks import already_closed
from ..errors import AlreadyDecided
from ..requests import LOCAL_CREATOR, Request
from .core import Json, Tx
from .outbox_ops import OutboxOps
from .request_reads import RequestReads


class RequestClosing(RequestReads, OutboxOps):
    def expire(self, request_id: str) -> Request | None:
        """Expire one request if its deadline has passed and it is still open; else None."""
        now = utcnow()
        with self._transaction() as (tx, changes):
            request = self._locked(tx, request_id)
            if request.is_terminal or request.deadline > now:
                return None
            self._expire_locked(tx, request, now)
            changes.request_ids.add(request_id)
            row = tx.one("get_request", id=request_id)
            assert row is not None
            return self._request(row)

    def expire_due(self, *, limit: int = 500) -> list[Request]:
        """Expire every open request past its deadline (the sweeper's job). Safe on several replicas."""
        now = utcnow()
        with self._read() as tx:
            if tx.one("any_due", now=now) is None:
                return []  # the usual sweep: no write transaction, no lock taken from writers
        expired = []
        with self._transaction() as (tx, changes):
            for row in tx.all("due_requests", now=now, limit=limit):
                request = self._locked(tx, row["id"])
                if request.is_terminal:
                    continue
                self._expire_locked(tx, request, now)
                changes.request_ids.add(request.id)
                updated = tx.one("get_request", id=request.id)
                assert updated is not None
                expired.append(self._request(updated))
        return expired

    def _expire_locked(self, tx: Tx, request: Request, now: datetime) -> None:
        if tx.run("expire_request", id=request.id, now=now) == 1:
            self._audit(
                tx,
                "request.expired",
                actor="system",
                channel="sweeper",
                request_id=request.id,
                data={"deadline": to_iso(request.deadline), "on_expire": request.rule.on_expire},
            )
            self._enqueue_event(tx, request.id, "request.expired", "update", now)

    def cancel(
        self, request_id: str, *, actor: str, channel: str = "api", reason: str | None = None
    ) -> Request:
        """Cancel an open request (the agent aborted its run). Decided requests stay as they are."""
        now = utcnow()
        with self._transaction() as (tx, changes):
            request = self._locked(tx, request_id)
            if request.is_terminal:
                raise AlreadyDecided(already_closed(request))
            stored = {
                "type": "cancel",
                "actor": actor,
                "channel": channel,
                "at": to_iso(now),
                "reason": reason,
            }
            tx.run("cancel_request", id=request_id, now=now, decision=Json(stored))
            self._audit(
                tx,
                "request.cancelled",
                actor=actor,
                channel=channel,
                request_id=request_id,
                data={"reason": reason},
            )
            self._enqueue_event(tx, request_id, "request.cancelled", "update", now)
            changes.request_ids.add(request_id)
            row = tx.one("get_request", id=request_id)
            assert row is not None
            return self._request(row)

    def cancel_thread(
        self,
        thread_id: str,
        *,
        actor: str,
        channel: str = "api",
        reason: str | None = None,
        created_by: str = LOCAL_CREATOR,
    ) -> int:
        """Cancel every open request of one creator's run; returns how many were cancelled."""
        cancelled = 0
        for request_id in self.open_requests_in_thread(thread_id, created_by=created_by):
            try:
                self.cancel(request_id, actor=actor, channel=channel, reason=reason)
                cancelled += 1
            except AlreadyDecided:
                continue
        return cancelled
