"""Running a request's planned reminders and escalations (`signoff.request_steps`), the
sweeper's job: on several replicas each due step is taken by one (PostgreSQL: SKIP LOCKED), and
whatever it does commits with the step marked done, so a restart neither loses nor repeats one.

A reminder writes one `follow_up` outbox row (event `request.reminded`) per notice the request
had: the channel sends it after that notice, in its thread where the platform has threads. An
escalation adds its people and groups as approvers (the earlier ones keep theirs) and writes a
notice (event `request.escalated`) for each person newly told on each of the rule's channels."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from itertools import groupby

from .._util import to_iso, utcnow
from ..request_steps import RequestStep, StepOutcome, request_step
from ..requests import Request, RequestStatus
from .core import Json, Tx
from .outbox_ops import OutboxOps
from .request_reads import RequestReads

REMINDED = "request.reminded"
ESCALATED = "request.escalated"


def due_clock() -> datetime:
    """The moment that says which steps are due (a test moves it; what is written keeps real time)."""
    return utcnow()


class StepOps(RequestReads, OutboxOps):
    def steps_of(self, request_id: str) -> list[RequestStep]:
        """A request's planned steps, in time order, with what came of those that ran."""
        with self._read() as tx:
            return [request_step(row) for row in tx.all("steps_for", request_id=request_id)]

    def run_due_steps(self, *, now: datetime | None = None, limit: int = 200) -> list[RequestStep]:
        """Run every step due at `now` (default: `due_clock()`): the sweeper's job. Returns the
        steps as they ended (`done`, `superseded` by a later reminder, `skipped`: the request
        had ended). What they write (outbox rows, audit entries, `done_at`) is stamped now."""
        due_at = now or due_clock()
        with self._read() as tx:
            if tx.one("any_due_step", now=due_at) is None:
                return []  # the usual sweep: no write transaction
        finished: list[RequestStep] = []
        with self._transaction() as (tx, changes):
            due = [request_step(row) for row in tx.all("due_steps", now=due_at, limit=limit)]
            if len(due) == limit and due[0].request_id != due[-1].request_id:
                # the last request's steps may go on past the page: all of them at the next sweep,
                # so that its superseded reminders are told apart from the one sent
                due = [step for step in due if step.request_id != due[-1].request_id]
            for request_id, group in groupby(due, key=lambda step: step.request_id):
                request = self._locked(tx, request_id)
                finished.extend(self._run_steps(tx, request, list(group), utcnow()))
                changes.request_ids.add(request_id)
        return finished

    def _run_steps(
        self, tx: Tx, request: Request, steps: list[RequestStep], now: datetime
    ) -> list[RequestStep]:
        if request.status is not RequestStatus.PENDING:
            return [self._finish_step(tx, step, "skipped", now) for step in steps]
        finished: list[RequestStep] = []
        reminders = [step for step in steps if step.kind == "remind"]
        if reminders:
            *earlier, latest = reminders
            finished.extend(self._finish_step(tx, step, "superseded", now) for step in earlier)
            self._remind(tx, request, latest, len(earlier), now)
            finished.append(self._finish_step(tx, latest, "done", now))
        for step in steps:
            if step.kind == "escalate":
                request = self._escalate(tx, request, step, now)
                finished.append(self._finish_step(tx, step, "done", now))
        return finished

    def _remind(self, tx: Tx, request: Request, step: RequestStep, superseded: int, now: datetime) -> None:
        self._enqueue_event(tx, request.id, REMINDED, "follow_up", now)
        self._audit(
            tx,
            REMINDED,
            actor="system",
            channel="sweeper",
            request_id=request.id,
            data={
                "at": step.payload.get("at"),
                "due_at": to_iso(step.due_at),
                "approvers": list(request.rule.approvers),
                "superseded": superseded,
            },
        )

    def _escalate(self, tx: Tx, request: Request, step: RequestStep, now: datetime) -> Request:
        """Add the step's principals as approvers and tell them; the request as it now is."""
        added = tuple(name for name in step.to if name not in request.rule.approvers)
        if added and request.rule.approvers:  # with none named, anyone may decide already
            rule = replace(request.rule, approvers=(*request.rule.approvers, *added))
            tx.run("set_request_rule", id=request.id, rule=Json(rule.snapshot()), now=now)
            request = replace(request, rule=rule)
        for principal in added:
            tx.send("insert_approver", request_id=request.id, principal=principal)
        told = {
            (row["channel"], row["recipient"]) for row in tx.all("notice_recipients", request_id=request.id)
        }
        notices = [
            notice
            for notice in self._notices(request.rule.channels, added)
            if (notice["channel"], notice["recipient"]) not in told
        ]
        for notice in notices:
            tx.send("enqueue_notice", request_id=request.id, event=ESCALATED, now=now, **notice)
        self._enqueue_event(tx, request.id, ESCALATED, None, now)  # the webhooks that want it
        self._audit(
            tx,
            ESCALATED,
            actor="system",
            channel="sweeper",
            request_id=request.id,
            data={
                "after": step.payload.get("after"),
                "due_at": to_iso(step.due_at),
                "to": list(step.to),
                "added": list(added),
                "notified": sorted({notice["recipient"] for notice in notices}),
            },
        )
        return request

    @staticmethod
    def _finish_step(tx: Tx, step: RequestStep, outcome: StepOutcome, now: datetime) -> RequestStep:
        tx.run("finish_step", id=step.id, outcome=outcome, now=now)
        return replace(step, done_at=now, outcome=outcome)
