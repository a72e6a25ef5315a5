"""Execution records: claim, renew, finish; dead claims become in_doubt (DESIGN §7).

A claim whose process died is marked in_doubt when the call is replayed, and by the server's
sweeper once its lease has run out (`mark_dead_executions`), so that nobody has to replay the
call to learn of it; people find them with `list_executions(status="in_doubt")`.

A request made by a process that waits to run it (`gate.run`) has its execution recorded from
the start (`not_started`, that runner). When it is approved and nobody claims it within a lease
because its runner stopped, the sweeper marks it `abandoned` (`mark_abandoned_executions`):
nothing ran, so a replay of the call may still claim it (once), and people find it listed with
the in-doubt ones.
"""

from __future__ import annotations

import hmac
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from .._util import from_iso, to_iso, utcnow
from ..errors import ArgsMismatch, RequestConflict, RequestNotFound
from ..execution import (
    DEFAULT_LEASE,
    Claim,
    args_digest,
    current_owner,
    owner_is_alive,
    why_dead,
    why_unclaimed,
)
from ..requests import Execution, ExecutionStatus, RequestStatus
from .core import AuditNote, Json, Tx
from .outbox_ops import OutboxOps


class ExecutionOps(OutboxOps):
    def get_execution(self, request_id: str) -> Execution | None:
        with self._read() as tx:
            row = tx.one("get_execution", request_id=request_id)
            return _execution(row) if row is not None else None

    def claim_execution(
        self,
        request_id: str,
        *,
        lease: timedelta,
        args_digest: str,
        idempotent: bool = False,
        owner: dict[str, Any] | None = None,
    ) -> Claim:
        """Compare-and-set the execution to `running` for this process, if it may run.

        `args_digest` (`signoff.execution.args_digest`) says what the call will run with: a
        claim whose digest is not that of the decided args is refused (`ArgsMismatch`,
        audited as `execution.refused`), so an approval cannot be spent on other args.
        Not started or abandoned (approved, never run) → claimed. Succeeded → the stored result.
        Running by a live process → busy.
        Running by a dead process → marked in_doubt (audited). In doubt or failed → claimed
        again only if the tool is idempotent. `owner` is the running process (this one unless
        the claim comes through the server for a remote agent).
        """
        owner = {**owner, "token": current_owner()["token"]} if owner is not None else current_owner()
        now = utcnow()
        claim = self._claim(request_id, lease, args_digest, idempotent, owner, now)
        if isinstance(claim, Claim):
            return claim
        with self._transaction() as (tx, _):
            self._audit(
                tx,
                "execution.refused",
                actor="agent",
                channel="gate",
                request_id=request_id,
                data={"args_digest": args_digest, "decided_args_digest": claim, "host": owner.get("host")},
            )
        raise ArgsMismatch(
            f"request {request_id} was decided with other args than this claim would run "
            f"(claimed {args_digest}, decided {claim}); nothing ran"
        )

    def _claim(
        self,
        request_id: str,
        lease: timedelta,
        digest: str,
        idempotent: bool,
        owner: dict[str, Any],
        now: datetime,
    ) -> Claim | str:
        """The claim, or the decided args' digest when `digest` is not it (nothing changed)."""
        with self._transaction() as (tx, changes):
            row = tx.one("lock_claim", id=request_id)
            if row is None:
                raise RequestNotFound(f"no request with id {request_id!r}")
            decided = args_digest(row["final_args"] if row["final_args"] is not None else row["args"])
            if not hmac.compare_digest(decided, digest):
                return decided
            params = {
                "request_id": request_id,
                "owner_token": owner["token"],
                "owner": Json(owner),
                "lease_until": now + lease,
                "now": now,
            }
            if row["request_id"] is None:  # no execution recorded yet
                note = _started(request_id, owner, 1, digest)
                return self._claimed(tx, request_id, note, tx.one("insert_execution", **params))
            execution = _execution(row)
            if execution.status is ExecutionStatus.SUCCEEDED:
                return Claim("succeeded", execution)
            if execution.status is ExecutionStatus.RUNNING:
                if owner_is_alive(execution.owner, execution.lease_until, now):
                    return Claim("busy", execution)
                if self._mark_in_doubt(tx, execution, row["owner_token"], now, channel="gate"):
                    changes.request_ids.add(request_id)
                    execution = replace(execution, status=ExecutionStatus.IN_DOUBT)
                else:  # the sweeper marked it first, or its run ended meanwhile
                    execution = _execution(tx.one("get_execution", request_id=request_id) or row)
                    if execution.status is ExecutionStatus.SUCCEEDED:
                        return Claim("succeeded", execution)
            if execution.status in (ExecutionStatus.NOT_STARTED, ExecutionStatus.ABANDONED) or (
                idempotent and execution.status in (ExecutionStatus.IN_DOUBT, ExecutionStatus.FAILED)
            ):
                note = _started(request_id, owner, execution.attempts + 1, digest)
                return self._reclaim(tx, params, execution.status, note)
            return Claim("in_doubt" if execution.status is ExecutionStatus.IN_DOUBT else "failed", execution)

    def mark_dead_executions(self, *, limit: int = 500) -> list[Execution]:
        """Mark in_doubt (audited) every running execution whose lease has run out and whose
        process is not alive: on this host the pid decides (a live process is never marked),
        elsewhere the lease. The sweeper's job; safe on several replicas (PostgreSQL skips the
        rows another replica or a claim holds). Returns the executions marked."""
        now = utcnow()
        with self._read() as tx:
            if not tx.all("running_past_lease", now=now, limit=1):
                return []
        marked = []
        with self._transaction() as (tx, changes):
            for row in tx.all("running_past_lease", now=now, limit=limit):
                execution = _execution(row)
                if owner_is_alive(execution.owner, execution.lease_until, now):
                    continue
                if self._mark_in_doubt(tx, execution, row["owner_token"], now, channel="sweeper"):
                    changes.request_ids.add(execution.request_id)
                    marked.append(replace(execution, status=ExecutionStatus.IN_DOUBT))
        return marked

    def mark_abandoned_executions(
        self, *, lease: timedelta = DEFAULT_LEASE, now: datetime | None = None, limit: int = 500
    ) -> list[Execution]:
        """Mark abandoned (audited) every approved call whose waiting runner stopped before it ran
        it: recorded for a runner, never claimed, approved at least `lease` ago, and its runner
        not alive (on this host the pid decides, elsewhere the lease from the approval). The
        records of requests closed without an approval are dropped (nothing will run). The
        sweeper's job, like `mark_dead_executions`. Returns the executions marked."""
        now = now or utcnow()
        params = {"decided_before": now - lease, "limit": limit}
        with self._read() as tx:
            if not tx.all("expected_runs_closed", **{**params, "limit": 1}):
                return []
        marked = []
        with self._transaction() as (tx, changes):
            for row in tx.all("expected_runs_closed", **params):
                request_id = row["request_id"]
                if row["request_status"] not in (RequestStatus.APPROVED, RequestStatus.EDITED):
                    tx.run("drop_expected_run", request_id=request_id)
                    continue
                decided_at = _moment(row["decided_at"])
                if owner_is_alive(row["owner"], decided_at + lease, now):
                    continue
                if tx.run("mark_abandoned", request_id=request_id, now=now) != 1:
                    continue
                self._audit(
                    tx,
                    "execution.abandoned",
                    actor="system",
                    channel="sweeper",
                    request_id=request_id,
                    data={
                        "runner": row["owner"],
                        "reason": why_unclaimed(row["owner"]),
                        "decided_at": to_iso(decided_at),
                    },
                )
                changes.request_ids.add(request_id)
                marked.append(replace(_execution(row), status=ExecutionStatus.ABANDONED))
        return marked

    def _mark_in_doubt(
        self, tx: Tx, execution: Execution, owner_token: str, now: datetime, *, channel: str
    ) -> bool:
        """Compare-and-set a dead claim to in_doubt, with its audit entry; False if it moved on."""
        if tx.run("mark_in_doubt", request_id=execution.request_id, owner_token=owner_token, now=now) != 1:
            return False
        self._audit(
            tx,
            "execution.in_doubt",
            actor="system",
            channel=channel,
            request_id=execution.request_id,
            data={
                "owner": execution.owner,
                "reason": why_dead(execution.owner),
                "attempt": execution.attempts,
            },
        )
        return True

    def list_executions(
        self,
        *,
        status: ExecutionStatus | str = ExecutionStatus.IN_DOUBT,
        limit: int = 50,
        cursor: str | None = None,
    ) -> list[Execution]:
        """Executions in `status`, newest request first; `cursor`: the last request id of the
        previous page."""
        status = ExecutionStatus(status)
        with self._read() as tx:
            rows = tx.all("list_executions", status=status.value, cursor=cursor, limit=limit)
        return [_execution(row) for row in rows]

    def _claimed(self, tx: Tx, request_id: str, note: AuditNote, row: dict[str, Any] | None) -> Claim:
        """The claim of `row`, the execution as the claim's write returned it, with its audit entry
        and the webhooks' event; None when the write found it moved on (the sweeper took it
        meanwhile): nothing is claimed, nothing runs."""
        claim = claim_of(request_id, row)
        tx.send("queue_audit", **note.params())
        if self._webhooks_may_want(note.action):
            self._enqueue_event(tx, request_id, note.action, None)
        return claim

    def _reclaim(
        self, tx: Tx, params: dict[str, Any], from_status: ExecutionStatus, note: AuditNote
    ) -> Claim:
        """Claim an execution recorded in `from_status` (`_claimed`; PostgreSQL: one statement)."""
        row = tx.one("reclaim_execution", from_status=from_status, **params)
        return self._claimed(tx, params["request_id"], note, row)

    def renew_lease(self, request_id: str, token: str, *, lease: timedelta) -> bool:
        now = utcnow()
        with self._transaction() as (tx, _):
            return (
                tx.run(
                    "renew_lease", request_id=request_id, owner_token=token, lease_until=now + lease, now=now
                )
                == 1
            )

    def finish_execution(
        self, request_id: str, token: str, *, succeeded: bool, result: Any = None, error: str | None = None
    ) -> Execution:
        status = ExecutionStatus.SUCCEEDED if succeeded else ExecutionStatus.FAILED
        with self._transaction() as (tx, changes):
            row = tx.one(
                "finish_execution",
                request_id=request_id,
                owner_token=token,
                status=status,
                result=Json(result) if succeeded else None,
                error=error,
                now=utcnow(),
            )
            if row is None:
                raise RequestConflict(
                    f"the execution of request {request_id} is no longer held by this process"
                )
            self._audit(
                tx,
                f"execution.{status}",
                actor="agent",
                channel="gate",
                request_id=request_id,
                data={"error": error} if error else {},
            )
            self._enqueue_event(tx, request_id, "execution.finished", "follow_up")
            changes.request_ids.add(request_id)
            return _execution(row)

    def reset_execution(self, request_id: str, *, actor: str, channel: str = "cli") -> Execution:
        """A person says an in_doubt, failed or abandoned call may run (again): the next replay
        runs it."""
        with self._transaction() as (tx, changes):
            if tx.run("reset_execution", request_id=request_id, now=utcnow()) != 1:
                row = tx.one("get_execution", request_id=request_id)
                state = row["status"] if row else "absent"
                raise RequestConflict(
                    f"the execution of request {request_id} is {state}; "
                    "only in_doubt, failed or abandoned can be reset"
                )
            self._audit(tx, "execution.reset", actor=actor, channel=channel, request_id=request_id)
            changes.request_ids.add(request_id)
            row = tx.one("get_execution", request_id=request_id)
            assert row is not None
            return _execution(row)


def claim_of(request_id: str, row: dict[str, Any] | None) -> Claim:
    """The claim of the execution row a claim's write returned (None: it found the row moved on)."""
    if row is None:
        raise RequestConflict(
            f"the execution of request {request_id} changed while it was being claimed; nothing ran"
        )
    return Claim("claimed", _execution(row), row["owner_token"])


def _started(request_id: str, owner: dict[str, Any], attempt: int, digest: str) -> AuditNote:
    data = {"attempt": attempt, "host": owner["host"], "pid": owner["pid"], "args_digest": digest}
    return AuditNote("execution.started", "agent", "gate", request_id, data)


def _execution(row: dict[str, Any]) -> Execution:
    return Execution(
        request_id=row["request_id"],
        status=ExecutionStatus(row["status"]),
        attempts=int(row["attempts"]),
        owner=row["owner"],
        lease_until=row["lease_until"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        result=row["result"],
        error=row["error"],
    )


def _moment(value: datetime | str) -> datetime:
    return value if isinstance(value, datetime) else from_iso(value)
