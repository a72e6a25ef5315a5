"""Checking a decision against its request without recording it, as `Store.decide` checks it.

Adapters that take decisions from somewhere else (a framework's own resume value) check a whole
batch first and record it only when every one fits, so that a bad batch decides nothing.
"""

from __future__ import annotations

from typing import Any

from .._util import utcnow
from ..backend import Backend
from ..decisions import Decision
from ..errors import AlreadyDecided, NotAnApprover, RequestExpired, RequestNotReady
from ..requests import Request, RequestStatus
from ..store.request_ops import RequestOps, may_decide


def check_decision(backend: Backend, request: Request, decision: Decision, *, actor: str) -> None:
    """Raise what `backend.decide(request.id, decision, actor=actor)` would raise for this request
    as it is now: closed or drafting, past its deadline, `actor` not an approver, the decision not
    allowed by the rule, an edit breaking the args schema, an answer breaking the answer schema."""
    if request.status is RequestStatus.DRAFTING:
        raise RequestNotReady(f"request {request.id} is still drafting; its arguments are not complete")
    if request.is_terminal:
        raise AlreadyDecided(f"request {request.id} is already {request.status.value}")
    if request.deadline <= utcnow():
        raise RequestExpired(f"request {request.id} is past its deadline")
    if request.rule.approvers and actor not in request.rule.approvers:
        groups = _groups_of(backend, actor)
        if groups is not None and not may_decide(request, actor, groups):
            raise NotAnApprover(f"{actor} is not an approver of request {request.id}")
    RequestOps._check_decision(request, decision)


def applied_already(request: Request, decision: Decision, *, actor: str, channel: str) -> bool:
    """Whether `decision` by `actor` through `channel` is already recorded on `request` (its
    final decision, or `actor`'s vote of a quorum still counting)."""
    record = request.decision
    if record is not None:
        return record.actor == actor and record.channel == channel and record.decision == decision
    return decision.type == "approve" and actor in request.approvals


def _groups_of(backend: Backend, actor: str) -> list[str] | None:
    """The actor's groups where the backend knows them (a local store); None through a server,
    which checks the approvers itself (against its token's user) when the decision is sent."""
    groups_of: Any = getattr(backend, "groups_of", None)
    return list(groups_of(actor)) if callable(groups_of) else None
