"""Creating requests: get-or-create by (creator, thread_id, tool_call_id), and drafts whose
arguments are still streaming in."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from .._util import new_id, to_iso, utcnow
from ..errors import AlreadyDecided
from ..request_steps import plan_steps
from ..requests import NewRequest, Request, RequestStatus, trusted_request
from ..rules.callables import names_a_callable
from ..rules.four_eyes import refuse_unapprovable
from ..templates import redact_args, render_description
from .core import AuditNote, Json
from .grant_ops import GrantOps

NONE = Json([])
"""No notices, no steps: most requests' (a Json encodes its value as it is made)."""


class RequestCreation(GrantOps):
    def create_request(self, new: NewRequest) -> tuple[Request, bool]:
        """Get or create by (creator, thread_id, tool_call_id): each creator (`new.actor`) has its
        own thread ids. Returns the request and whether it is new. A request a standing grant
        covers is created approved through it (`signoff.grants`)."""
        request_id = new_id("req")
        now = utcnow()
        status = RequestStatus.DRAFTING if new.drafting else RequestStatus.PENDING
        rule = (
            new.rule.for_requester(new.requester)
            .for_annotations(new.tool_annotations)
            .for_separation(new.requester, creator=new.actor, creator_owner=new.creator_owner)
        )
        refuse_unapprovable(rule, f"a request for {new.tool_name!r}")
        if rule is not new.rule:
            new = replace(new, rule=rule)
        notices = self._notices(rule.channels, rule.approvers) if status is RequestStatus.PENDING else []
        params = {
            "id": request_id,
            "thread_id": new.thread_id,
            "tool_call_id": new.tool_call_id,
            "kind": new.kind,
            "tool_name": new.tool_name,
            "tool_description": new.tool_description,
            "args": Json(new.args, new.args_text),
            "args_schema": Json(new.args_schema) if new.args_schema is not None else None,
            "answer_schema": Json(new.answer_schema) if new.answer_schema is not None else None,
            "agent": new.agent,
            "app": new.app,
            "requester": new.requester,
            "round": new.round,
            "client": new.client,
            "runner": Json(new.runner) if new.runner is not None else None,
            "status": status,
            "description": new.description,
            "rule": Json(new.rule.snapshot()),
            "now": now,
            "deadline": new.deadline,
            "created_by": new.actor,
            "notices": Json(notices) if notices else NONE,
            "steps": Json(steps) if (steps := plan_steps(rule, now, new.deadline)) else NONE,
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
                **({"client": new.client} if new.client is not None else {}),
                "approvers": list(new.rule.approvers),
                **({"separated": list(rule.separated)} if rule.separated else {}),
                "deadline": to_iso(new.deadline),
                "status": status.value,
            },
        )
        grant = self._covering_grant(new)
        if grant is not None and self._insert_granted(new, grant, params, note):
            return self.get_request(request_id), True
        if self._insert_request_audited(params, list(new.rule.approvers), note) is not None:
            return _created(new, request_id, status, now), True
        existing = self.find_request(new.thread_id, new.tool_call_id, created_by=new.actor)
        assert existing is not None, "the conflicting request vanished"
        return existing, False

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
            description = request.description
            if not names_a_callable(request.rule.description):  # a callable's text stays as it wrote it
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
            if ready:
                notices = self._notices(request.rule.channels, request.rule.approvers)
                self._enqueue_notices(tx, request_id, notices, utcnow())
            changes.request_ids.add(request_id)
            updated = tx.one("get_request", id=request_id)
            assert updated is not None
            return self._request(updated)


def _created(new: NewRequest, request_id: str, status: RequestStatus, now: datetime) -> Request:
    """The request just inserted, built from what was written rather than read back."""
    return trusted_request(
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
        round=new.round,
        client=new.client,
    )
