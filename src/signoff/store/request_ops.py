"""Requests in the store: get-or-create, drafts, decisions (with quorum), expiry, cancel."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from .._util import format_moment, new_id, to_iso, utcnow
from ..changes import changes_data
from ..decisions import Decision, DecisionRecord, Edit, Respond, decision_to_dict
from ..errors import (
    AlreadyDecided,
    DecisionNotAllowed,
    InvalidDecision,
    NotAnApprover,
    RequestExpired,
    RequestNotFound,
    RequestNotReady,
)
from ..requests import LOCAL_CREATOR, STATUS_FOR_DECISION, NewRequest, Request, RequestStatus
from ..templates import redact_args, render_description
from ..validation import validate_args
from .core import AuditNote, Json, StoreCore, Tx
from .listing import SEARCH_WINDOW, listing_params


def principals_of(user: str, groups: list[str] | tuple[str, ...]) -> list[str]:
    return [user, *(f"group:{group}" for group in groups)]


def may_decide(request: Request, user: str, groups: list[str] | tuple[str, ...]) -> bool:
    """Only a request's approvers may see and decide it; none named means anyone authenticated."""
    if not request.rule.approvers:
        return True
    return any(principal in request.rule.approvers for principal in principals_of(user, groups))


class RequestOps(StoreCore):
    # -- create and read ----------------------------------------------------------------------

    def create_request(self, new: NewRequest) -> tuple[Request, bool]:
        """Get or create by (creator, thread_id, tool_call_id): each creator (`new.actor`) has its
        own thread ids. Returns the request and whether it is new."""
        request_id = new_id("req")
        now = utcnow()
        status = RequestStatus.DRAFTING if new.drafting else RequestStatus.PENDING
        params = {
            "id": request_id,
            "thread_id": new.thread_id,
            "tool_call_id": new.tool_call_id,
            "kind": new.kind,
            "tool_name": new.tool_name,
            "tool_description": new.tool_description,
            "args": Json(new.args),
            "args_schema": Json(new.args_schema) if new.args_schema is not None else None,
            "answer_schema": Json(new.answer_schema) if new.answer_schema is not None else None,
            "agent": new.agent,
            "app": new.app,
            "requester": new.requester,
            "status": status,
            "description": new.description,
            "rule": Json(new.rule.snapshot()),
            "now": now,
            "deadline": new.deadline,
            "created_by": new.actor,
        }
        note = AuditNote(
            "request.created",
            actor=new.actor,
            channel=new.channel,
            request_id=request_id,
            data={
                "tool": new.tool_name,
                "thread_id": new.thread_id,
                "tool_call_id": new.tool_call_id,
                "args": redact_args(new.args, new.rule.redact),
                "agent": new.agent,
                "app": new.app,
                "requester": new.requester,
                "approvers": list(new.rule.approvers),
                "deadline": to_iso(new.deadline),
                "status": status.value,
            },
        )
        if self._insert_request_audited(params, list(new.rule.approvers), note) is not None:
            return _created(new, request_id, status, now), True
        existing = self.find_request(new.thread_id, new.tool_call_id, created_by=new.actor)
        assert existing is not None, "the conflicting request vanished"
        return existing, False

    def get_request(self, request_id: str) -> Request:
        with self._read() as tx:
            row = tx.one("get_request", id=request_id)
            if row is None:
                raise RequestNotFound(f"no request with id {request_id!r}")
            return self._with_approvals(tx, row)

    def get_requests(self, request_ids: list[str]) -> dict[str, Request]:
        """Several requests in one read, by id; unknown ids are left out."""
        if not request_ids:
            return {}
        with self._read() as tx:
            rows = tx.all("get_requests", ids=list(dict.fromkeys(request_ids)))
            return {row["id"]: self._with_approvals(tx, row) for row in rows}

    def get_request_for(self, request_id: str, user: str, *, channel: str = "api") -> Request:
        """The request, if `user` may see it (an approver, or anyone when it names none);
        otherwise NotAnApprover, and the attempt is audited."""
        request = self.get_request(request_id)
        if request.rule.approvers and not may_decide(request, user, self.groups_of(user)):
            refused = NotAnApprover(f"{user} is not an approver of request {request_id}")
            self.record(
                "request.view_refused",
                actor=user,
                channel=channel,
                request_id=request_id,
                data={"reason": "not an approver"},
            )
            refused.audited = True
            raise refused
        return request

    def find_request(
        self, thread_id: str, tool_call_id: str, *, created_by: str = LOCAL_CREATOR
    ) -> Request | None:
        """The request `created_by` made for (thread_id, tool_call_id), if any."""
        with self._read() as tx:
            row = tx.one(
                "find_request", created_by=created_by, thread_id=thread_id, tool_call_id=tool_call_id
            )
            return self._with_approvals(tx, row) if row is not None else None

    def list_requests(
        self,
        *,
        status: str | list[str] | None = None,
        tool: str | None = None,
        agent: str | None = None,
        app: str | None = None,
        thread_id: str | None = None,
        tool_call_id: str | None = None,
        approver: str | None = None,
        search: str | None = None,
        visible_to: str | None = None,
        created_by: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> list[Request]:
        """Newest first. `visible_to` keeps only what that user may see (as an approver, or as the
        one who asked); `created_by` only what that user (an agent) created; `approver` keeps
        requests naming that principal; `search` matches tool, description, thread and agent
        (case-insensitive substring) among the newest `listing.SEARCH_WINDOW` requests before the
        cursor; `cursor` is the last id seen. Every listing reads index ranges (see `listing`)."""
        statuses = [status] if isinstance(status, str) else status
        principals = principals_of(visible_to, self.groups_of(visible_to)) if visible_to is not None else None
        params = listing_params(
            statuses=statuses,
            viewer=visible_to,
            principals=principals,
            tool=tool,
            agent=agent,
            app=app,
            thread_id=thread_id,
            tool_call_id=tool_call_id,
            created_by=created_by,
            approver=approver,
            search=search,
            cursor=cursor,
            limit=limit,
        )
        with self._read() as tx:
            if params["search"] is not None:
                floor = tx.one("search_floor", cursor=cursor, window=SEARCH_WINDOW)
                params["search_floor"] = floor["id"] if floor is not None else ""
            return [self._request(row) for row in tx.all("list_requests", **params)]

    def decisions(self, request_id: str) -> list[DecisionRecord]:
        """Every decision on the request: a quorum's votes in order, or the one decision."""
        with self._read() as tx:
            votes = [self._decision_record(row) for row in tx.all("decisions_for", request_id=request_id)]
            if votes:
                return votes
            row = tx.one("get_request", id=request_id)
        if row is None:
            raise RequestNotFound(f"no request with id {request_id!r}")
        decision = self._request(row).decision
        return [decision] if decision is not None else []

    def open_requests_in_thread(self, thread_id: str, *, created_by: str = LOCAL_CREATOR) -> list[str]:
        """The open requests of one creator's run."""
        with self._read() as tx:
            rows = tx.all("open_in_thread", created_by=created_by, thread_id=thread_id)
            return [row["id"] for row in rows]

    def _with_approvals(self, tx: Tx, row: dict[str, Any]) -> Request:
        rule_quorum = int(row["rule"].get("quorum", 1))
        approvals: tuple[str, ...] = ()
        if rule_quorum > 1:
            approvals = tuple(r["actor"] for r in tx.all("approvals_for", request_id=row["id"]))
        return self._request(row, approvals)

    # -- drafts -------------------------------------------------------------------------------

    def update_draft(
        self,
        request_id: str,
        *,
        args: dict[str, Any] | None = None,
        ready: bool = False,
        actor: str = "agent",
        channel: str = "gate",
    ) -> Request:
        """Merge streamed args into a drafting request; `ready=True` makes it pending (decidable)."""
        with self._transaction() as (tx, changes):
            request = self._locked(tx, request_id)
            if request.status is not RequestStatus.DRAFTING:
                raise AlreadyDecided(f"request {request_id} is {request.status}, not drafting")
            merged = {**request.args, **(args or {})}
            status = RequestStatus.PENDING if ready else RequestStatus.DRAFTING
            description = render_description(
                request.rule.description,
                tool_name=request.tool_name,
                args=merged,
                redact=request.rule.redact,
                prefix=request.rule.description_prefix,
            )
            tx.run(
                "update_draft",
                id=request_id,
                args=Json(merged),
                description=description,
                status=status,
                now=utcnow(),
            )
            self._audit(
                tx,
                "request.ready" if ready else "request.updated",
                actor=actor,
                channel=channel,
                request_id=request_id,
                data={"args": redact_args(merged, request.rule.redact)},
            )
            changes.request_ids.add(request_id)
            updated = tx.one("get_request", id=request_id)
            assert updated is not None
            return self._request(updated)

    # -- decisions ----------------------------------------------------------------------------

    def decide(
        self,
        request_id: str,
        decision: Decision,
        *,
        actor: str,
        channel: str = "api",
        on_behalf: bool = False,
    ) -> Request:
        """Record a person's decision. The first decision wins; everything else is refused.

        Raises RequestNotFound (404), NotAnApprover (403, audited), AlreadyDecided or
        RequestNotReady (409), RequestExpired (410), DecisionNotAllowed or InvalidArguments (422).
        A refused decision changes nothing but the audit log (and, past the deadline, the
        expiry that was due anyway). `on_behalf` skips the approver check: for system actors.
        """
        if not actor or not isinstance(actor, str):
            raise InvalidDecision("a decision needs an actor")
        request = self.get_request(request_id)
        _refuse_if_closed(request)
        if request.deadline <= utcnow():
            self.expire(request_id)
            raise RequestExpired(f"request {request_id} expired at {format_moment(request.deadline)}")
        approvers = request.rule.approvers
        if (
            not on_behalf
            and approvers
            and actor not in approvers
            and not may_decide(request, actor, self.groups_of(actor))
        ):
            refused = NotAnApprover(f"{actor} is not an approver of request {request_id}")
            self.record(
                "decision.refused",
                actor=actor,
                channel=channel,
                request_id=request_id,
                data={"type": decision.type, "reason": "not an approver"},
            )
            refused.audited = True
            raise refused
        self._check_decision(request, decision)
        if request.rule.quorum > 1:
            return self._vote(request_id, decision, actor=actor, channel=channel)
        now = utcnow()
        decision_id = new_id("dec")
        finish = _finish_params(request, decision, decision_id, actor, channel, now)
        row = self._finish_request_audited(
            finish,
            AuditNote(
                "request.decided",
                actor=actor,
                channel=channel,
                request_id=request_id,
                data=_decision_audit(request, decision),
            ),
        )
        if row is not None:
            return _decided(request, decision, finish)
        # someone else decided, cancelled or expired it since we read it
        current = self.get_request(request_id)
        _refuse_if_closed(current)
        self.expire(request_id)
        raise RequestExpired(f"request {request_id} expired at {format_moment(current.deadline)}")

    def _vote(self, request_id: str, decision: Decision, *, actor: str, channel: str) -> Request:
        """A quorum's vote, counted under the request's lock; the last approval (or any reject) ends it."""
        now = utcnow()
        with self._transaction() as (tx, changes):
            request = self._locked(tx, request_id)
            _refuse_if_closed(request)
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
            row = tx.one(
                "finish_request", **_finish_params(request, decision, decision_id, actor, channel, now)
            )
            if row is None:
                raise AlreadyDecided(f"request {request.id} was decided by someone else first")
            self._audit(
                tx, "request.decided", actor=actor, channel=channel, request_id=request_id, data=audit
            )
            return self._locked(tx, request_id)

    @staticmethod
    def _check_decision(request: Request, decision: Decision) -> None:
        rule = request.rule
        if decision.type not in rule.allowed_decisions:
            allowed = ", ".join(rule.allowed_decisions)
            raise DecisionNotAllowed(
                f"{decision.type!r} is not allowed for this request (allowed: {allowed})"
            )
        if rule.quorum > 1 and decision.type in ("edit", "respond"):
            raise DecisionNotAllowed(
                f"{decision.type!r} is not allowed when {rule.quorum} approvers must agree; approve or reject"
            )
        if isinstance(decision, Edit):
            validate_args(request.args_schema, decision.args)
        if isinstance(decision, Respond) and request.answer_schema is not None:
            validate_args(request.answer_schema, decision.answer, what="answer")

    # -- expiry and cancel --------------------------------------------------------------------

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

    def cancel(
        self, request_id: str, *, actor: str, channel: str = "api", reason: str | None = None
    ) -> Request:
        """Cancel an open request (the agent aborted its run). Decided requests stay as they are."""
        now = utcnow()
        with self._transaction() as (tx, changes):
            request = self._locked(tx, request_id)
            if request.is_terminal:
                raise AlreadyDecided(_already(request))
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

    def count_auto_decisions(self, thread_id: str, *, created_by: str = LOCAL_CREATOR) -> int:
        """How many unattended auto-decisions one creator's run has had (for `max_auto_resume`)."""
        with self._read() as tx:
            row = tx.one("count_auto_decisions", created_by=created_by, thread_id=thread_id)
            return int(row["n"]) if row else 0

    def _locked(self, tx: Tx, request_id: str) -> Request:
        row = tx.one("lock_request", id=request_id)
        if row is None:
            raise RequestNotFound(f"no request with id {request_id!r}")
        return self._with_approvals(tx, row)


def _refuse_if_closed(request: Request) -> None:
    if request.status is RequestStatus.EXPIRED:
        raise RequestExpired(f"request {request.id} expired at {format_moment(request.deadline)}")
    if request.status is RequestStatus.DRAFTING:
        raise RequestNotReady(f"request {request.id} is still drafting; its arguments are not complete")
    if request.is_terminal:
        raise AlreadyDecided(_already(request))


def _created(new: NewRequest, request_id: str, status: RequestStatus, now: datetime) -> Request:
    """The request just inserted, built from what was written rather than read back."""
    return Request(
        id=request_id,
        thread_id=new.thread_id,
        tool_call_id=new.tool_call_id,
        kind=new.kind,
        tool_name=new.tool_name,
        tool_description=new.tool_description,
        args=new.args,
        args_schema=new.args_schema,
        answer_schema=new.answer_schema,
        agent=new.agent,
        app=new.app,
        requester=new.requester,
        status=status,
        description=new.description,
        rule=new.rule,
        created_at=now,
        updated_at=now,
        deadline=new.deadline,
        created_by=new.actor,
    )


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
    return replace(
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


def _decision_audit(request: Request, decision: Decision) -> dict[str, Any]:
    """What the audit log keeps of a decision: original and final args (redacted), the words said."""
    data: dict[str, Any] = {"type": decision.type, "original_args": request.shown_args()}
    if isinstance(decision, Edit):
        data["final_args"] = redact_args(decision.args, request.rule.redact)
        data["changes"] = changes_data(request.args, decision.args, request.rule.redact)
    said = decision_to_dict(decision)
    for key in ("comment", "message"):
        if said.get(key) is not None:
            data[key] = said[key]
    if isinstance(decision, Respond) and decision.value is not None:
        data["value"] = decision.value
    return data


def _already(request: Request) -> str:
    if request.status is RequestStatus.CANCELLED:
        return f"request {request.id} was cancelled"
    who = f" by {request.decision.actor}" if request.decision else ""
    return f"request {request.id} was already {request.status.in_words}{who}"
