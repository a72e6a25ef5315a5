"""Whether a decision may be recorded on a request as it is now: one check for the store's
`decide` and for adapters that take decisions from elsewhere (a framework's own resume value)
and check a whole batch before recording any of it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from ._util import format_moment, utcnow
from .decisions import Decision, Edit, Respond
from .errors import (
    AlreadyDecided,
    DecisionNotAllowed,
    NotAnApprover,
    RequestExpired,
    RequestNotReady,
    SeparationOfDuties,
)
from .requests import Request, RequestStatus
from .validation import validate_args


def principals_of(user: str, groups: Sequence[str]) -> list[str]:
    """The names a user answers to on a request: their own and `group:NAME` for each group."""
    return [user, *(f"group:{group}" for group in groups)]


def may_decide(request: Request, user: str, groups: Sequence[str]) -> bool:
    """Only a request's approvers may see and decide it. A request whose rule names none is
    its requester's (requests made since are stored naming them: `RequestRule.for_requester`);
    only one without a requester is any person's (agents are kept out where they act)."""
    approvers = request.rule.approvers
    if not approvers:
        return request.requester is None or user == request.requester
    return any(principal in approvers for principal in principals_of(user, groups))


def already_closed(request: Request) -> str:
    """What a refusal says of a request that is no longer open."""
    if request.status is RequestStatus.CANCELLED:
        return f"request {request.id} was cancelled"
    who = f" by {request.decision.actor}" if request.decision else ""
    return f"request {request.id} was already {request.status.in_words}{who}"


def refuse_if_closed(request: Request) -> None:
    """Raise if the request takes no decision any more (or not yet: still drafting)."""
    if request.status is RequestStatus.EXPIRED:
        raise RequestExpired(f"request {request.id} expired at {format_moment(request.deadline)}")
    if request.status is RequestStatus.DRAFTING:
        raise RequestNotReady(f"request {request.id} is still drafting; its arguments are not complete")
    if request.is_terminal:
        raise AlreadyDecided(already_closed(request))


SEPARATED_DECISIONS = ("approve", "edit", "respond")
"""What four eyes keep the separated people from: anything that lets the call go on (or answers
in its place). Rejecting stays theirs: stopping their own request needs no second pair of eyes."""


def separation_refusal(
    request: Request, decision: Decision, *, actor: str, unattended: bool = False
) -> SeparationOfDuties | None:
    """The refusal four eyes give `actor`'s `decision` on `request` (None: no objection). The
    separated people (`RequestRule.separated`) may not approve, edit or respond; nor may an
    unattended run decide anything but a reject on its own, under any separation."""
    rule = request.rule
    if rule.separation is None or decision.type not in SEPARATED_DECISIONS:
        return None
    if unattended:
        return SeparationOfDuties(
            f"request {request.id} needs four eyes (separation: {rule.separation}): an unattended "
            f"run may not {decision.type} it on its own; a person must"
        )
    if actor not in rule.separated:
        return None
    if actor == request.requester:
        role = "the requester (the person the agent acts for)"
    elif actor == request.created_by:
        role = "the request's creator"
    else:
        role = "the owner of the agent's token"
    return SeparationOfDuties(
        f"{actor} may not {decision.type} request {request.id}: four eyes (separation: "
        f"{rule.separation}) keep {role} from approving it; another approver must (they may reject)"
    )


def check_decision_fits(request: Request, decision: Decision) -> None:
    """Raise if the request's rule does not allow the decision, or its args or answer break the
    request's schema."""
    rule = request.rule
    if decision.type not in rule.allowed_decisions:
        allowed = ", ".join(rule.allowed_decisions)
        raise DecisionNotAllowed(f"{decision.type!r} is not allowed for this request (allowed: {allowed})")
    if rule.quorum > 1 and decision.type in ("edit", "respond"):
        raise DecisionNotAllowed(
            f"{decision.type!r} is not allowed when {rule.quorum} approvers must agree; approve or reject"
        )
    if isinstance(decision, Edit):
        validate_args(request.args_schema, decision.args)
    if isinstance(decision, Respond) and request.answer_schema is not None:
        validate_args(request.answer_schema, decision.answer, what="answer")


def check_decision(
    request: Request,
    decision: Decision,
    *,
    actor: str,
    groups: Callable[[], Sequence[str]] | None,
    now: datetime | None = None,
    unattended: bool = False,
) -> None:
    """Raise what recording `decision` by `actor` on `request` would raise now: closed or
    drafting (`AlreadyDecided`, `RequestNotReady`), past its deadline (`RequestExpired`), not an
    approver (`NotAnApprover`; `groups` gives the actor's groups when asked, None skips the check,
    for system actors or where a server checks it), kept out by four eyes (`SeparationOfDuties`,
    checked whatever `groups` is; `unattended` for an unattended run's own decision), not allowed
    or breaking a schema."""
    refuse_if_closed(request)
    if request.deadline <= (now or utcnow()):
        raise RequestExpired(f"request {request.id} expired at {format_moment(request.deadline)}")
    approvers = request.rule.approvers
    if (
        groups is not None
        and actor not in approvers
        and not may_decide(request, actor, groups() if approvers else ())
    ):
        raise NotAnApprover(f"{actor} is not an approver of request {request.id}")
    separated = separation_refusal(request, decision, actor=actor, unattended=unattended)
    if separated is not None:
        raise separated
    check_decision_fits(request, decision)


__all__ = [
    "already_closed",
    "check_decision",
    "check_decision_fits",
    "may_decide",
    "principals_of",
    "refuse_if_closed",
    "separation_refusal",
]
