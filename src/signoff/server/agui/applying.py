"""Recording a run's answers: all checked against their requests first, then each decided with
the API's own code (`deciding.decide_as`, channel `agui`)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Any

from ag_ui.core import RunAgentInput

from ..._util import utcnow
from ...decision_checks import check_decision
from ...decisions import Decision, Edit, decision_to_dict, parse_decision
from ...errors import (
    NotAnApprover,
    RequestConflict,
    RequestExpired,
    RequestNotFound,
    SeparationOfDuties,
    SignoffError,
)
from ...identity import User
from ...requests import Request
from ...store import Store
from ...templates import REDACTED
from ..access import can_see
from ..context import Server
from ..deciding import REFUSED, decide_as
from ..refusals import audit_refusal
from .answers import Answer, history_calls, payload_for, with_result
from .ids import CallRef, parse_tool_call_id

CHANNEL = "agui"
STATE_ERRORS = (RequestConflict, RequestExpired)
"""What the request's state (not the answer) refuses: decided, cancelled or expired meanwhile,
still drafting. Reported in the call's result, never a run error."""


@dataclass(frozen=True)
class Checked:
    answer: Answer
    request: Request
    decision: Decision | None
    note: str | None = None
    """Why the request's state already settles this answer (then nothing is recorded)."""


def check_answers(store: Store, answers: list[Answer], user: User) -> list[Checked]:
    """Each answer with its request and decision; raises, naming the answer, for an unknown
    call, a request the caller may not see or decide, a decision the rule does not allow or
    args that break the tool's schema. Nothing is recorded here but refusals."""
    found = store.get_requests([answer.call.request_id for answer in answers])
    now = utcnow()
    checked = []
    for answer in answers:
        request = found.get(answer.call.request_id)
        if request is None or not answer.call.matches(request):
            raise RequestNotFound(f"{answer.where}: {answer.tool_call_id!r} names no request of signoff's")
        if not can_see(request, user):
            raise audit_refusal(
                store,
                NotAnApprover(f"{answer.where}: {user.name} is not an approver of request {request.id}"),
                actor=user.name,
                channel=CHANNEL,
                request_id=request.id,
                action="request.view_refused",
            )
        payload = payload_for(answer, request)
        if payload is None:
            checked.append(Checked(answer, request, None))
            continue
        decision = _decision(answer, request, payload)
        try:
            check_decision(request, decision, actor=user.name, groups=lambda: user.groups, now=now)
        except STATE_ERRORS as exc:
            checked.append(Checked(answer, request, decision, note=exc.message))
            continue
        except SignoffError as exc:
            refused = type(exc)(f"{answer.where}: {exc.message}")
            if isinstance(exc, NotAnApprover):
                reason = exc.message if isinstance(exc, SeparationOfDuties) else "not an approver"
                data = {"type": decision.type, "reason": reason}
                raise audit_refusal(
                    store,
                    refused,
                    actor=user.name,
                    channel=CHANNEL,
                    request_id=request.id,
                    action=REFUSED,
                    data=data,
                ) from None
            raise refused from None
        checked.append(Checked(answer, request, decision))
    return checked


def _decision(answer: Answer, request: Request, payload: dict[str, Any]) -> Decision:
    """The answer's decision for this request. An edit's redacted args came to the person
    masked: sent back masked, they keep their original values (as the inbox's edit form does)."""
    try:
        decision = parse_decision(payload, tool_name=request.tool_name)
    except SignoffError as exc:
        raise type(exc)(f"{answer.where}: {exc.message}") from None
    if isinstance(decision, Edit) and request.rule.redact:
        args = dict(decision.args)
        for key in request.rule.redact:
            if args.get(key) == REDACTED and key in request.args:
                args[key] = request.args[key]
        decision = replace(decision, args=args)
    return decision


async def apply_answers(
    server: Server, checked: list[Checked], user: User
) -> list[tuple[Request, str | None]]:
    """Record each checked decision; what to report for each request answered: the request as
    it is now, and a note when the answer did not decide it. A cancelled resume entry on a
    request still open reports nothing (it stays, and is shown again)."""
    store = server.store
    results: list[tuple[Request, str | None]] = []
    for item in checked:
        request = item.request
        if item.decision is None or item.note is not None:
            request = await server.run(_as_it_stands, store, request)
            if request.is_terminal or item.note is not None:
                results.append((request, item.note))
            continue
        payload = decision_to_dict(item.decision)
        try:
            decided = await server.write(decide_as, server, request.id, payload, user, channel=CHANNEL)
        except STATE_ERRORS as exc:  # decided, cancelled or expired since the check
            results.append((await server.run(_as_it_stands, store, request), exc.message))
            continue
        note = None
        if not decided.is_terminal:
            needed = decided.rule.quorum - len(decided.approvals)
            note = f"your approval of request {decided.id} is counted; {needed} more approval(s) needed"
        results.append((decided, note))
    return results


def _as_it_stands(store: Store, request: Request) -> Request:
    """The request now; one past its deadline that the sweeper has not reached yet is expired here."""
    if not request.is_terminal and request.deadline <= utcnow():
        return store.expire(request.id) or store.get_request(request.id)
    return store.get_request(request.id)


def closed_since(store: Store, run: RunAgentInput, answered: Collection[str], user: User) -> list[Request]:
    """signoff's calls in the client's history that have closed (decided elsewhere, expired,
    cancelled) without a result there yet, and that this run did not answer."""
    answered_before = with_result(run)
    refs: dict[str, CallRef] = {}
    for call in history_calls(run):
        ref = parse_tool_call_id(call.id)
        if ref is not None and call.id not in answered_before and ref.request_id not in answered:
            refs[ref.request_id] = ref
    closed = []
    for request_id, request in store.get_requests(list(refs)).items():
        if not refs[request_id].matches(request) or not can_see(request, user):
            continue
        request = _as_it_stands(store, request)
        if request.is_terminal:
            closed.append(request)
    return closed
