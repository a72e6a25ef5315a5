"""The outbox (DESIGN §9): every notification and card update is a row written in the
transaction of the change that caused it, and the delivery worker (`signoff.outbox`) sends it.

Rows: a `notice` per (channel, person) when a request becomes pending (the rule's `channels`
times its approvers, groups expanded to their members); when it ends (decided, expired,
cancelled) an `update` per notice, and after execution a `follow_up` per notice (a reminder is
a `follow_up` too, of event `request.reminded`: see `step_ops`; an escalation writes notices of
event `request.escalated` for the people it adds); an `event` per
webhook that wants the request's event. A row's `target` (the person's address on the channel)
is found when it is first sent: the verified address a person has then. A `code` row (a
verification code to the address a person claims, see `address_codes`) is about no request and
names its target when it is written; its attempts are not in any request's delivery log.

Claiming: due rows nobody holds, each taken with a lease (`claimed_until`); on PostgreSQL with
`FOR UPDATE SKIP LOCKED`, so several servers' workers never take the same row; a worker that
dies leaves its rows to be taken again when the lease runs out. Every attempt is recorded in the
request's delivery log (`deliveries`: one line per channel and target with the latest result;
`delivery_attempts`: each attempt) in the transaction that records the row's new state.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from .._util import new_id, utcnow
from ..errors import Conflict, NotFound
from ..rules.effective import INBOX_CHANNEL, REQUESTER_UNKNOWN
from .core import Json, StoreCore, Tx

OutboxMessage = Literal["notice", "update", "follow_up", "event", "code"]
OutboxState = Literal["pending", "sent", "dead", "skipped"]
AttemptResult = Literal["sent", "retrying", "failed", "skipped"]
WEBHOOK = "webhook"
"""The `channel` of a webhook's rows (their `target` is the webhook's id)."""
UPDATE_EVENTS = ("request.decided", "request.expired", "request.cancelled")


@dataclass(frozen=True, kw_only=True)
class OutboxRow:
    id: int
    request_id: str | None
    """None for a `code` row."""
    event: str
    message: OutboxMessage
    channel: str
    recipient: str | None
    target: str | None
    parent_id: int | None
    state: OutboxState
    attempts: int
    next_at: datetime
    claimed_by: str | None
    claimed_until: datetime | None
    ref: dict[str, Any] | None
    body: str | None
    last_error: str | None
    created_at: datetime
    updated_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "request_id": self.request_id,
            "event": self.event,
            "message": self.message,
            "channel": self.channel,
            "recipient": self.recipient,
            "target": self.target,
            "state": self.state,
            "attempts": self.attempts,
            "next_at": self.next_at.isoformat(),
            "last_error": self.last_error,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
        }


@dataclass(frozen=True, kw_only=True)
class Attempt:
    """One try at delivering an outbox row, as the delivery log keeps it."""

    id: int
    request_id: str
    outbox_id: int | None
    channel: str
    target: str
    message: str
    attempt: int
    outcome: AttemptResult
    error: str | None
    attempted_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {
            "channel": self.channel,
            "target": self.target,
            "message": self.message,
            "attempt": self.attempt,
            "result": self.outcome,
            "error": self.error,
            "at": self.attempted_at.isoformat(),
            "outbox_id": self.outbox_id,
        }


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """What became of one attempt: the row's new state and what the log says."""

    state: OutboxState
    result: AttemptResult
    target: str
    next_at: datetime
    ref: dict[str, Any] | None = None
    body: str | None = None
    error: str | None = None
    counts: bool = True
    """Whether this was an attempt (False: the row was only looked at, e.g. skipped)."""


def lane_of(row: OutboxRow) -> str:
    """Which lane a row is sent in: each webhook is one, each channel one (as `claim_outbox`
    counts them)."""
    return f"webhook:{row.target}" if row.channel == WEBHOOK else f"channel:{row.channel}"


def outbox_row(row: dict[str, Any]) -> OutboxRow:
    return OutboxRow(**{**row, "id": int(row["id"]), "parent_id": _int(row["parent_id"])})


def attempt_of(row: dict[str, Any]) -> Attempt:
    return Attempt(**{**row, "id": int(row["id"]), "outbox_id": _int(row["outbox_id"])})


def _refuse_if_disabled(tx: Tx, row: dict[str, Any]) -> None:
    """A dead letter of a disabled channel or webhook is not sent again (it sends nothing)."""
    if row["channel"] == WEBHOOK:
        webhook = tx.one("get_webhook", id=row["target"])
        disabled, what = bool(webhook and webhook["disabled"]), f"the webhook {row['target']}"
    else:
        stored = tx.one("get_channel", name=row["channel"])
        disabled, what = bool(stored and stored["disabled"]), f"the channel {row['channel']}"
    if disabled:
        raise Conflict(f"{what} is disabled: enable it first, then send this again")


def routes_notices(channels: tuple[str, ...]) -> bool:
    """Whether a rule with these channels sends notices (the inbox needs none): a request whose
    rule does not has no notice rows to update."""
    return any(channel != INBOX_CHANNEL for channel in channels)


def _int(value: Any) -> int | None:
    return int(value) if value is not None else None


class OutboxOps(StoreCore):
    # -- writing rows with the change that causes them -------------------------------------------

    def _notices(self, channels: tuple[str, ...], approvers: tuple[str, ...]) -> list[dict[str, str]]:
        """The notice rows of a request that becomes pending: (channel, person) for each of the
        rule's channels but the inbox, and each approver (groups as their members)."""
        if not routes_notices(channels):
            return []
        routed = [channel for channel in channels if channel != INBOX_CHANNEL]
        people: list[str] = []
        for principal in approvers:
            if principal == REQUESTER_UNKNOWN:
                continue
            if principal.startswith("group:"):
                with self._read() as tx:
                    rows = tx.all("members_of", group_name=principal[len("group:") :])
                people.extend(row["user_name"] for row in rows)
            else:
                people.append(principal)
        unique = list(dict.fromkeys(people))
        return [{"channel": channel, "recipient": person} for channel in routed for person in unique]

    @staticmethod
    def _enqueue_notices(tx: Tx, request_id: str, notices: list[dict[str, str]], now: datetime) -> None:
        for notice in notices:
            tx.send("enqueue_notice", request_id=request_id, event="request.created", now=now, **notice)
        tx.send("enqueue_event", request_id=request_id, event="request.created", message=None, now=now)

    @staticmethod
    def _enqueue_event(
        tx: Tx, request_id: str, event: str, message: OutboxMessage | None, now: datetime | None = None
    ) -> None:
        """`message` (update, follow_up) for each notice the request had, and `event` for each
        webhook that wants it; None: the webhooks only."""
        tx.send("enqueue_event", request_id=request_id, event=event, message=message, now=now or utcnow())

    # -- the delivery worker's side --------------------------------------------------------------

    def outbox_due(self) -> bool:
        """Whether any row is due now (a read: the idle worker's cheap look)."""
        with self._read() as tx:
            return tx.one("any_due_outbox", now=utcnow()) is not None

    def claim_outbox(
        self,
        worker: str,
        *,
        lease: timedelta,
        limit: int = 100,
        per_lane: int = 1000,
        full: tuple[str, ...] = (),
    ) -> list[OutboxRow]:
        """Take up to `limit` due rows for `worker` until `lease` from now: at most `per_lane`
        of each lane (`lane_of`), none of the lanes in `full`."""
        now = utcnow()
        with self._transaction() as (tx, _):
            rows = tx.all(
                "claim_outbox",
                worker=worker,
                lease=now + lease,
                now=now,
                limit=limit,
                per_lane=per_lane,
                full=list(full),
                scan=limit * 2,
            )
        return sorted((outbox_row(row) for row in rows), key=lambda row: (row.next_at, row.id))

    def get_outbox(self, outbox_id: int) -> OutboxRow | None:
        with self._read() as tx:
            row = tx.one("get_outbox", id=outbox_id)
        return outbox_row(row) if row is not None else None

    def finish_outbox(self, row: OutboxRow, worker: str, outcome: Outcome) -> bool:
        """Record an attempt: the row's new state, and the delivery log, together. False if the
        row is no longer `worker`'s (its lease ran out and another worker took it)."""
        return self.finish_outbox_many([(row, outcome)], worker)[0]

    def finish_outbox_many(self, finished: list[tuple[OutboxRow, Outcome]], worker: str) -> list[bool]:
        """`finish_outbox` for several rows in one transaction (one commit for a burst)."""
        now = utcnow()
        recorded = []
        with self._transaction() as (tx, _):
            for row, outcome in finished:
                recorded.append(self._finish_one(tx, row, worker, outcome, now))
        return recorded

    @staticmethod
    def _finish_one(tx: Tx, row: OutboxRow, worker: str, outcome: Outcome, now: datetime) -> bool:
        attempts = row.attempts + (1 if outcome.counts else 0)
        changed = tx.run(
            "finish_outbox",
            id=row.id,
            worker=worker,
            state=outcome.state,
            attempts=attempts,
            next_at=outcome.next_at,
            target=outcome.target,
            ref=Json(outcome.ref) if outcome.ref is not None else None,
            body=outcome.body,
            last_error=outcome.error,
            now=now,
        )
        if changed != 1:
            return False
        if row.request_id is None:  # a code: in no request's delivery log
            return True
        message = row.event if row.message == "event" else row.message
        tx.send(
            "insert_attempt",
            request_id=row.request_id,
            outbox_id=row.id,
            channel=row.channel,
            target=outcome.target,
            message=message,
            attempt=attempts,
            outcome=outcome.result,
            error=outcome.error,
            now=now,
        )
        if outcome.result != "skipped":
            tx.send(
                "record_delivery",
                id=new_id("dlv"),
                request_id=row.request_id,
                channel=row.channel,
                target=outcome.target,
                outcome=outcome.result,
                detail=outcome.error,
                now=now,
            )
        return True

    def postpone_outbox(self, row: OutboxRow, worker: str, *, until: datetime) -> None:
        """Give a row back without an attempt (an update whose notice is not sent yet)."""
        self.postpone_outboxes([row], worker, until=until)

    def postpone_outboxes(self, rows: list[OutboxRow], worker: str, *, until: datetime) -> None:
        """Give rows back without an attempt, in one statement."""
        if rows:
            with self._transaction() as (tx, _):
                tx.run(
                    "postpone_outboxes",
                    ids=[row.id for row in rows],
                    worker=worker,
                    next_at=until,
                    now=utcnow(),
                )

    # -- reading and repairing -------------------------------------------------------------------

    def outbox_for(self, request_id: str) -> list[OutboxRow]:
        with self._read() as tx:
            return [outbox_row(row) for row in tx.all("outbox_for", request_id=request_id)]

    def delivery_attempts(self, request_id: str) -> list[Attempt]:
        with self._read() as tx:
            rows = tx.all("attempts_for", request_id=request_id)
        return [attempt_of(row) for row in rows]

    def dead_letters(self, *, limit: int = 100) -> list[OutboxRow]:
        with self._read() as tx:
            return [outbox_row(row) for row in tx.all("dead_letters", limit=limit)]

    def retry_dead_letter(self, outbox_id: int, *, actor: str, channel: str = "cli") -> OutboxRow:
        """Send a dead-lettered row again (after fixing what made it fail); Conflict while its
        channel or webhook is disabled."""
        with self._transaction() as (tx, _):
            row = tx.one("get_outbox", id=outbox_id)
            if row is None:
                raise NotFound(f"no outbox row {outbox_id}")
            if row["state"] == "dead":
                _refuse_if_disabled(tx, row)
            if tx.run("retry_outbox", id=outbox_id, now=utcnow()) != 1:
                raise NotFound(f"outbox row {outbox_id} is {row['state']}, not dead")
            data = {
                "outbox_id": outbox_id,
                "channel": row["channel"],
                "event": row["event"],
                "before": {"state": "dead", "last_error": row["last_error"]},
                "after": {"state": "pending"},
            }
            self._audit(
                tx, "delivery.retried", actor=actor, channel=channel, request_id=row["request_id"], data=data
            )
            fresh = tx.one("get_outbox", id=outbox_id)
        assert fresh is not None
        return outbox_row(fresh)

    def outbox_counts(self) -> dict[tuple[str, str], int]:
        with self._read() as tx:
            return {(row["channel"], row["state"]): int(row["n"]) for row in tx.all("outbox_counts")}

    def latest_notified_pending(self, channel: str, recipient: str) -> str | None:
        """The newest pending request `recipient` was sent a notice of on `channel` (where a text
        reply without a request id goes); with none pending, the newest of any status, so that the
        reply is told it came too late."""
        with self._read() as tx:
            row = tx.one("latest_notified_pending", channel=channel, recipient=recipient)
        return str(row["id"]) if row is not None else None
