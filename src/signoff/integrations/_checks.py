"""Checking a decision against its request without recording it, as `Store.decide` checks it.

Adapters that take decisions from somewhere else (a framework's own resume value) check a whole
batch first and record it only when every one fits, so that a bad batch decides nothing.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import signoff
from signoff import Backend, Decision, Request


def check_decision(backend: Backend, request: Request, decision: Decision, *, actor: str) -> None:
    """Raise what `backend.decide(request.id, decision, actor=actor)` would raise for this request
    as it is now (`signoff.check_decision`); the approvers are checked where the
    backend knows the actor's groups (a local store), else by the server when it is sent."""
    groups_of: Any = getattr(backend, "groups_of", None)
    groups = partial(groups_of, actor) if callable(groups_of) else None
    signoff.check_decision(request, decision, actor=actor, groups=groups)


def applied_already(request: Request, decision: Decision, *, actor: str, channel: str) -> bool:
    """Whether `decision` by `actor` through `channel` is already recorded on `request` (its
    final decision, or `actor`'s vote of a quorum still counting)."""
    record = request.decision
    if record is not None:
        return record.actor == actor and record.channel == channel and record.decision == decision
    return decision.type == "approve" and actor in request.approvals
