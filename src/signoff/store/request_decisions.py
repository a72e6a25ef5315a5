"""Deciding a request: a person's decision (the first wins, everything else is refused), a
quorum's votes, and what the audit log keeps of each."""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any

from .._util import format_moment, new_id, to_iso, utcnow
from ..changes import changes_data
from ..decision_checks import check_decision, refuse_if_closed
from ..decisions import Approve, Decision, DecisionRecord, Edit, decision_to_dict
from ..errors import (
    AlreadyDecided,
    GrantNotAllowed,
    InvalidDecision,
    NotAnApprover,
    RequestError,
    RequestExpired,
    RequestNotFound,
    SeparationOfDuties,
)
from ..grants import GrantAsk
from ..requests import STATUS_FOR_DECISION, Request, changed_request
from ..templates import redact_args
from .core import AuditNote, Json, Tx
from .decide_statement import decision_words
from .grant_ops import GrantOps
from .outbox_ops import routes_notices
from .request_closing import RequestClosing


class RequestDecisions(RequestClosing, GrantOps):  # a decision past the deadline expires the request
    def decide(
        self,
        request_id: str,
        decision: Decision,
        *,
        actor: str,
        channel: str = "api",
        on_behalf: bool = False,
        grant: GrantAsk | None = None,
    ) -> Request:
        """Record a person's decision. The first decision wins; everything else is refused.
        An approval may give a standing `grant` (`signoff.grants`) in the same transaction.

        Raises RequestNotFound (404), NotAnApprover (403, audited), AlreadyDecided or
        RequestNotReady (409), RequestExpired (410), DecisionNotAllowed or InvalidArguments (422).
        A refused decision changes nothing but the audit log (and, past the deadline, the
        expiry that was due anyway). `on_behalf` skips the approver check: for system actors.
        """
        if not actor or not isinstance(actor, str):
            raise InvalidDecision("a decision needs an actor")
        tried = (
            None
            if grant is not None  # the statement gives no grants: the checked path does, or refuses
            else self._decide_at_once(request_id, decision, actor=actor, channel=channel, on_behalf=on_behalf)
        )
        if tried is not None and tried[0]:
            return tried[1]
        request = tried[1] if tried is not None else self.get_request(request_id)
        try:
            check_decision(
                request,
                decision,
                actor=actor,
                groups=None if on_behalf else partial(self.groups_of, actor),
                unattended=on_behalf,
            )
        except RequestExpired:
            if not request.is_terminal:
                self.expire(request_id)
            raise
        except NotAnApprover as refused:
            self.record(
                "decision.refused",
                actor=actor,
                channel=channel,
                request_id=request_id,
                data={"type": decision.type, "reason": _refusal_reason(refused)},
            )
            refused.audited = True
            raise
        given, decision = decision, _approval_if_unchanged(request, decision)
        if grant is not None:
            if on_behalf:
                raise GrantNotAllowed("only a person gives a standing grant")
            audit = _decision_audit(request, decision, given=given)
            return self._decide_granting(request, decision, grant, actor=actor, channel=channel, audit=audit)
        if request.rule.quorum > 1:
            return self._vote(request_id, decision, actor=actor, channel=channel)
        finish, note = _finishing(request, decision, given, actor, channel)
        row = self._finish_request_audited(finish, note, notified=routes_notices(request.rule.channels))
        if row is not None:
            return _decided(request, decision, finish)
        # someone else decided, cancelled or expired it since we read it
        current = self.get_request(request_id)
        refuse_if_closed(current)
        self.expire(request_id)
        raise RequestExpired(f"request {request_id} expired at {format_moment(current.deadline)}")

    def _decide_in_one_write(
        self, request_id: str, decision: Decision, *, actor: str, channel: str, on_behalf: bool
    ) -> tuple[bool, Request]:
        """`_decide_at_once` for a store whose write transaction reads on its own connection
        (SQLite): the request read, checked and decided in one write, with no other read before
        it. A decision the checks refuse (or a quorum's vote) changes nothing here: (False, the
        request as read), and `decide` refuses, audits, expires or counts it from there as its
        checked path does: its write is rolled back, not committed (an empty commit is one
        more commit that the writers queued behind it do not share)."""
        try:
            return self._decided_in_one_write(
                request_id, decision, actor=actor, channel=channel, on_behalf=on_behalf
            )
        except _NothingWritten as nothing:
            return False, nothing.request

    def _decided_in_one_write(
        self, request_id: str, decision: Decision, *, actor: str, channel: str, on_behalf: bool
    ) -> tuple[bool, Request]:
        with self._transaction() as (tx, changes):
            request = self._request_in_write(tx, request_id)
            if request is None:
                raise RequestNotFound(f"no request with id {request_id!r}")
            if request.rule.quorum > 1:
                raise _NothingWritten(request)
            try:
                check_decision(
                    request,
                    decision,
                    actor=actor,
                    groups=None if on_behalf else partial(self.groups_of, actor),
                    unattended=on_behalf,
                )
            except RequestError:
                raise _NothingWritten(request) from None
            given, decision = decision, _approval_if_unchanged(request, decision)
            finish, note = _finishing(request, decision, given, actor, channel)
            if (
                self._finish_in(tx, changes, finish, note, notified=routes_notices(request.rule.channels))
                is None
            ):
                raise _NothingWritten(request)
            return True, _decided(request, decision, finish)

    def _request_in_write(self, tx: Tx, request_id: str) -> Request | None:
        """The request as the write transaction `tx` reads it; None if there is none."""
        row = tx.one("get_request", id=request_id)
        return None if row is None else self._with_approvals(tx, row)

    def _vote(self, request_id: str, decision: Decision, *, actor: str, channel: str) -> Request:
        """A quorum's vote, counted under the request's lock; the last approval (or any reject) ends it."""
        now = utcnow()
        with self._transaction() as (tx, changes):
            request = self._locked(tx, request_id)
            refuse_if_closed(request)
            if request.deadline <= now:
                raise RequestExpired(f"request {request_id} expired at {format_moment(request.deadline)}")
            if actor in request.approvals:
                raise AlreadyDecided(
                    f"{actor} has already approved request {request.id}; "
                    f"{request.rule.quorum - len(request.approvals)} more approval(s) needed"
                )
            decision_id = new_id("dec")
            tx.send(
                "insert_decision",
                id=decision_id,
                request_id=request.id,
                type=decision.type,
                actor=actor,
                channel=channel,
                payload=Json(decision_to_dict(decision)),
                now=now,
            )
            changes.request_ids.add(request_id)
            audit = _decision_audit(request, decision)
            approvals = len(request.approvals) + 1
            if decision.type == "approve" and approvals < request.rule.quorum:
                audit.update(approvals=approvals, quorum=request.rule.quorum)
                self._audit(
                    tx, "decision.vote", actor=actor, channel=channel, request_id=request_id, data=audit
                )
                return self._locked(tx, request_id)
            finished = tx.run(
                "finish_request", **_finish_params(request, decision, decision_id, actor, channel, now)
            )
            if finished == 0:
                raise AlreadyDecided(f"request {request.id} was decided by someone else first")
            self._audit(
                tx, "request.decided", actor=actor, channel=channel, request_id=request_id, data=audit
            )
            self._enqueue_event(tx, request_id, "request.decided", "update", now)
            return self._locked(tx, request_id)


def _refusal_reason(refused: NotAnApprover) -> str:
    """What the audit log says of a refused decision: four eyes say why in full."""
    return refused.message if isinstance(refused, SeparationOfDuties) else "not an approver"


class _NothingWritten(Exception):
    """Leaves a write transaction that wrote nothing by rolling it back."""

    def __init__(self, request: Request) -> None:
        super().__init__(request.id)
        self.request = request


def _approval_if_unchanged(request: Request, decision: Decision) -> Decision:
    """An edit whose args are the request's own changes nothing: it is an approval (Haystack's
    rule, as `outcome_for` applies it), stored with status approved and its comment kept."""
    if isinstance(decision, Edit) and decision.args == request.args:
        return Approve(comment=decision.comment)
    return decision


def _finishing(
    request: Request, decision: Decision, given: Decision, actor: str, channel: str
) -> tuple[dict[str, Any], AuditNote]:
    """The compare-and-set that ends a pending request with `decision` (what was `given`, before
    an unchanged edit became an approval), and its audit entry."""
    finish = _finish_params(request, decision, new_id("dec"), actor, channel, utcnow())
    note = AuditNote(
        "request.decided",
        actor=actor,
        channel=channel,
        request_id=request.id,
        data=_decision_audit(request, decision, given=given),
    )
    return finish, note


def _decided(request: Request, decision: Decision, finish: dict[str, Any]) -> Request:
    """The request just decided, built from what `_finish_params` wrote rather than read back."""
    stored = finish["decision"].value
    now = finish["now"]
    record = DecisionRecord(
        id=stored["id"],
        request_id=request.id,
        decision=decision,
        actor=stored["actor"],
        channel=stored["channel"],
        created_at=now,
    )
    final_args = finish["final_args"]
    return changed_request(
        request,
        status=finish["status"],
        updated_at=now,
        decided_at=now,
        decision=record,
        final_args=final_args.value if final_args is not None else None,
        resolution=stored,
    )


def _finish_params(
    request: Request, decision: Decision, decision_id: str, actor: str, channel: str, now: datetime
) -> dict[str, Any]:
    """The compare-and-set that ends a pending request with `decision`."""
    final_args = None
    if decision.type == "approve":
        final_args = request.args
    elif isinstance(decision, Edit):
        final_args = decision.args
    said = decision_to_dict(decision)
    stored = {**said, "id": decision_id, "actor": actor, "channel": channel, "at": to_iso(now)}
    return {
        "id": request.id,
        "status": STATUS_FOR_DECISION[decision.type],
        "decision": Json(stored),
        "final_args": Json(final_args) if final_args is not None else None,
        "now": now,
    }


def _decision_audit(request: Request, decision: Decision, *, given: Decision | None = None) -> dict[str, Any]:
    """What the audit log keeps of a decision: original and final args (redacted), the words said,
    and `unchanged_edit` when an edit that changed nothing was taken as the approval it is."""
    data: dict[str, Any] = {"type": decision.type, "original_args": request.shown_args()}
    if isinstance(given, Edit) and not isinstance(decision, Edit):
        data["unchanged_edit"] = True
    if isinstance(decision, Edit):
        data["final_args"] = redact_args(decision.args, request.rule.redact)
        data["changes"] = changes_data(request.args, decision.args, request.rule.redact)
    data.update(decision_words(decision))
    return data
