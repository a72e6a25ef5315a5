"""Standing grants in the store (`signoff.grants`): given with an approval, in its transaction;
matched when a request is created, in the transaction that writes it approved; listed; revoked.

A grant covers a new request only if it is still in force in the transaction that writes the
request approved (PostgreSQL holds its row there, so a revocation waits for it and every call
after a revocation has returned is asked again)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .._util import new_id, to_iso, utcnow
from ..decision_checks import refuse_if_closed
from ..decisions import Approve, Decision, decision_to_dict
from ..errors import AlreadyDecided, GrantNotAllowed, NotFound, PermissionDenied, RequestExpired
from ..execution import args_digest
from ..grants import (
    GRANT_CHANNEL,
    Call,
    Grant,
    GrantAsk,
    check_grant_ask,
    may_still_approve,
)
from ..requests import STATUS_FOR_DECISION, NewRequest, Request, RequestStatus
from .core import AuditNote, Json
from .outbox_ops import OutboxOps
from .request_reads import RequestReads

MAX_LISTED = 500


class GrantOps(RequestReads, OutboxOps):
    # -- giving -------------------------------------------------------------------------------

    def _decide_granting(
        self,
        request: Request,
        decision: Decision,
        ask: GrantAsk,
        *,
        actor: str,
        channel: str,
        audit: dict[str, Any],
    ) -> Request:
        """Approve `request` as `actor` and give the grant `ask` in the same transaction.
        GrantNotAllowed (422) when its rule allows no such grant: then nothing is decided."""
        if not isinstance(decision, Approve):
            raise GrantNotAllowed(
                "a standing grant goes with an approval, not with an edit, reject or answer"
            )
        check_grant_ask(ask, request.rule, kind=request.kind, app=request.app)
        digest = args_digest(request.args) if ask.when is None else None
        now = utcnow()
        grant_id = new_id("grt")
        decision_id = new_id("dec")
        with self._transaction() as (tx, changes):
            current = self._locked(tx, request.id)
            refuse_if_closed(current)
            if current.deadline <= now:
                raise RequestExpired(f"request {request.id} expired")
            stored = {
                **decision_to_dict(decision),
                "id": decision_id,
                "actor": actor,
                "channel": channel,
                "at": to_iso(now),
                "granted": grant_id,
            }
            finished = tx.run(
                "finish_request",
                id=request.id,
                status=STATUS_FOR_DECISION["approve"],
                decision=Json(stored),
                final_args=Json(request.args),
                now=now,
            )
            if finished == 0:
                raise AlreadyDecided(f"request {request.id} was decided by someone else first")
            self._audit(
                tx,
                "request.decided",
                actor=actor,
                channel=channel,
                request_id=request.id,
                data={**audit, "granted": grant_id},
            )
            self._enqueue_event(tx, request.id, "request.decided", "update", now)
            grant = Grant(
                id=grant_id,
                tool_name=request.tool_name,
                scope=ask.scope,
                agent=request.agent if ask.scope == "agent" else None,
                app=request.app if ask.scope == "app" else None,
                thread_id=request.thread_id if ask.scope == "thread" else None,
                creator=request.created_by if ask.scope != "app" else None,
                condition=ask.when,
                args_digest=digest,
                granted_by=actor,
                request_id=request.id,
                created_at=now,
                expires_at=now + ask.lifetime,
            )
            tx.send(
                "insert_grant",
                **{name: value for name, value in grant.to_dict(now).items() if name in _INSERTED},
                tool_name=grant.tool_name,
                condition=grant.condition,
                args_digest=grant.args_digest,
                now=now,
                expires_at=grant.expires_at,
            )
            self._audit(
                tx,
                "grant.created",
                actor=actor,
                channel=channel,
                request_id=request.id,
                data=_grant_audit(grant),
            )
            changes.request_ids.add(request.id)
            return self._locked(tx, request.id)

    # -- covering -----------------------------------------------------------------------------

    def _covering_grant(self, new: NewRequest) -> Grant | None:
        """The oldest grant in force that covers `new` (its rule already the request's own)."""
        rule = new.rule
        if new.kind != "tool" or new.drafting or rule.max_grant is None or rule.quorum > 1:
            return None
        now = utcnow()
        with self._read() as tx:
            rows = tx.all("active_grants_for_tool", tool_name=new.tool_name, now=now)
        if not rows:
            return None
        call = Call(
            tool_name=new.tool_name,
            args=new.args,
            agent=new.agent,
            app=new.app,
            requester=new.requester,
            thread_id=new.thread_id,
            creator=new.actor,
        )
        for row in rows:
            grant = Grant.from_row(row)
            if (
                grant.matches(call)
                and grant.granted_by not in rule.separated  # four eyes: not by one kept out
                and may_still_approve(rule.approvers, new.requester, grant.granted_by, self.groups_of)
            ):
                return grant
        return None

    def _insert_granted(self, new: NewRequest, grant: Grant, params: dict[str, Any], note: AuditNote) -> bool:
        """Write the new request approved through `grant`, if the grant is still in force in this
        transaction; False (nothing written) if it is not, or the request's key exists."""
        now = params["now"]
        with self._transaction() as (tx, changes):
            if tx.one("hold_active_grant", id=grant.id, now=utcnow()) is None:
                return False
            if tx.run("insert_request", **params) == 0:
                return False
            request_id = params["id"]
            for principal in new.rule.approvers:
                tx.send("insert_approver", request_id=request_id, principal=principal)
            created = replace(
                note, data={**note.data, "status": RequestStatus.APPROVED.value, "grant": grant.id}
            )
            tx.send("queue_audit", **created.params())
            # born decided: the webhooks hear what a request created then approved tells them,
            # in that order; no notice goes out and no reminder is planned (nobody is asked)
            if self._webhooks_may_want(note.action):
                tx.send("enqueue_event", request_id=request_id, event=note.action, message=None, now=now)
            if params["runner"] is not None:
                tx.send("expect_execution", request_id=request_id, runner=params["runner"], now=now)
            stored = {
                "type": "approve",
                "id": new_id("dec"),
                "actor": grant.granted_by,
                "channel": GRANT_CHANNEL,
                "at": to_iso(now),
                "grant": grant.id,
            }
            tx.run(
                "finish_request",
                id=request_id,
                status=RequestStatus.APPROVED,
                decision=Json(stored),
                final_args=Json(new.args),
                now=now,
            )
            self._audit(
                tx,
                "request.decided",
                actor=grant.granted_by,
                channel=GRANT_CHANNEL,
                request_id=request_id,
                data={"type": "approve", "original_args": note.data.get("args", {}), "grant": grant.id},
            )
            self._enqueue_event(tx, request_id, "request.decided", None, now)
            changes.request_ids.add(request_id)
            return True

    # -- reading and revoking -----------------------------------------------------------------

    def get_grant(self, grant_id: str) -> Grant:
        with self._read() as tx:
            row = tx.one("get_grant", id=grant_id)
        if row is None:
            raise NotFound(f"no grant with id {grant_id!r}")
        return Grant.from_row(row)

    def list_grants(
        self, *, include_ended: bool = False, granted_by: str | None = None, limit: int = MAX_LISTED
    ) -> list[Grant]:
        """The grants in force, newest first; `include_ended`: the expired and revoked ones too;
        `granted_by`: only those that person gave."""
        with self._read() as tx:
            rows = tx.all(
                "list_grants",
                include_ended=include_ended,
                granted_by=granted_by,
                now=utcnow(),
                limit=min(limit, MAX_LISTED),
            )
        return [Grant.from_row(row) for row in rows]

    def revoke_grant(self, grant_id: str, *, actor: str, channel: str = "api", admin: bool = False) -> Grant:
        """End a grant now. Its author or an admin may; NotFound (404), PermissionDenied (403,
        audited), or Conflict-free: a grant already ended is returned as it is."""
        grant = self.get_grant(grant_id)
        if actor != grant.granted_by and not admin:
            self.record(
                "grant.revoke_refused",
                actor=actor,
                channel=channel,
                request_id=grant.request_id,
                data={"grant": grant_id, "reason": "neither its author nor an admin"},
            )
            refused = PermissionDenied(
                f"only {grant.granted_by} (who gave it) or an admin may revoke grant {grant_id}"
            )
            refused.audited = True
            raise refused
        now = utcnow()
        with self._transaction() as (tx, _):
            if tx.one("revoke_grant", id=grant_id, actor=actor, now=now) is not None:
                self._audit(
                    tx,
                    "grant.revoked",
                    actor=actor,
                    channel=channel,
                    request_id=grant.request_id,
                    data={"grant": grant_id, "tool": grant.tool_name},
                )
                grant = replace(grant, revoked_at=now, revoked_by=actor)
        return grant


_INSERTED = frozenset({"id", "scope", "agent", "app", "thread_id", "creator", "granted_by", "request_id"})


def _grant_audit(grant: Grant) -> dict[str, Any]:
    return {
        "grant": grant.id,
        "tool": grant.tool_name,
        "scope": grant.scope,
        "agent": grant.agent,
        "app": grant.app,
        "thread_id": grant.thread_id,
        "when": grant.condition,
        "args_digest": grant.args_digest,
        "expires_at": to_iso(grant.expires_at),
    }
