"""`/requests/{id}`: everything about one request: the card (decidable while pending), the
details, the decision(s), the execution record, the audit trail and the delivery log."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from starlette.responses import HTMLResponse

from ...audit import AuditEntry
from ...changes import Change, changes, changes_from_data
from ...errors import SignoffError
from ...execution import args_digest, decided_args, may_run
from ...presentation.cards import Card, pretty_json
from ...request_steps import steps_summary
from ...requests import Execution, Request
from ...store import Store
from ...store.report_ops import Delivery
from ...templates import redacted_result
from ..access import Caller, visible_request
from ..context import server_of
from .page_access import PageCaller, PageError
from .rendering import page_context, render
from .rule_origin import authority_text, origin_text

router = APIRouter(include_in_schema=False)
log = logging.getLogger("signoff.server")
T = TypeVar("T")


@router.get("/requests/{request_id}", response_class=HTMLResponse)
def request_page(request_id: str, http: HttpRequest, caller: PageCaller) -> HTMLResponse:
    try:
        request = visible_request(server_of(http).store, request_id, caller.user, channel=caller.channel)
    except SignoffError as exc:
        raise PageError.of(exc) from None
    return render_request_page(
        http, caller, Card(request=request, viewer=caller.user, details_link=False, eager=True)
    )


def render_request_page(
    http: HttpRequest, caller: Caller, card: Card, *, status_code: int = 200
) -> HTMLResponse:
    store = server_of(http).store
    request = card.request
    votes = store.decisions(request.id) if request.rule.quorum > 1 else []
    execution = store.get_execution(request.id)
    context = page_context(http, caller, active="request")
    context.update(
        card=card,
        req=request,
        record=request.to_dict(),
        votes=votes,
        execution=execution,
        run_digest=_run_digest(request),
        result=_shown_result(request, execution),
        audit=[(entry, audit_changes(entry)) for entry in store.audit_entries(request_id=request.id)],
        deliveries=_deliveries(store, request.id),
        outbox=_quietly(store.outbox_for, request.id),
        attempts=_quietly(store.delivery_attempts, request.id),
        steps_said=steps_summary(_quietly(store.steps_of, request.id)),
        pretty_json=pretty_json,
        asked_under=origin_text(request.rule.origin),
        authority=authority_text(request.rule.origin),
    )
    return render(http, "request.html", context, status_code=status_code)


def _run_digest(request: Request) -> str | None:
    """The args digest a run of this request must claim with, once it may run; withheld when
    the rule redacts args (a digest of a short secret can be guessed by trying values)."""
    if not may_run(request) or request.rule.redact:
        return None
    return args_digest(decided_args(request))


def _shown_result(request: Request, execution: Execution | None) -> str | None:
    """The tool's result whole, redacted as the rule's `redact` says (as the follow-up shows it, uncut)."""
    if execution is None or execution.result is None:
        return None
    return redacted_result(execution.result, request.rule.redact, request.args, indent=2)


def audit_changes(entry: AuditEntry) -> list[Change]:
    """What an edit changed, as its audit entry keeps it (entries written before the entry held
    its changes: from its original and final args)."""
    data = entry.data or {}
    if isinstance(data.get("changes"), list):
        return changes_from_data(data["changes"])
    before, after = data.get("original_args"), data.get("final_args")
    if isinstance(before, dict) and isinstance(after, dict):
        return changes(before, after)
    return []


def _deliveries(store: Store, request_id: str) -> list[Delivery] | None:
    """The delivery log; None when it cannot be read (the page still shows everything else)."""
    try:
        return store.deliveries_for(request_id)
    except Exception:
        log.exception("could not read the delivery log of %s", request_id)
        return None


def _quietly(read: Callable[[str], list[T]], request_id: str) -> list[T]:
    """A part of the page that may fail to read without taking the page down."""
    try:
        return read(request_id)
    except Exception:
        log.exception("could not read the outbox of %s", request_id)
        return []
