"""One card: its HTML (for live updates), deciding from it, and a handle link to open it elsewhere.

Deciding goes through `decide_as`, like every other surface. A refused decision comes back as
the card, in its current state, with the reason written on it (and the form that had a problem
still open with what was typed); the response keeps the error's status code.
"""

from __future__ import annotations

from dataclasses import replace

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from starlette.responses import HTMLResponse, RedirectResponse, Response

from ..._util import format_span
from ...errors import RequestNotFound, SignoffError
from ...presentation.cards import DONE_WORDS, PANELS, Card, field_errors_of
from ...presentation.decision_form import decision_payload, form_values
from ...presentation.refusals import refusal_text
from ...requests import Request
from ...store import Store
from ..access import Caller, visible_request
from ..context import server_of
from ..deciding import decide_as
from .page_access import Form, PageCaller, PageError, is_htmx
from .rendering import render
from .request_page import render_request_page

router = APIRouter(include_in_schema=False)


def _visible(store: Store, request_id: str, caller: Caller) -> Request:
    try:
        return visible_request(store, request_id, caller.user, channel=caller.channel)
    except SignoffError as exc:
        raise PageError.of(exc) from None


@router.get("/inbox/cards/{request_id}", response_class=HTMLResponse)
def card(request_id: str, http: HttpRequest, caller: PageCaller, full: bool = False) -> HTMLResponse:
    """The card's HTML; `full` as the request page shows it (forms included, no details link)."""
    request = _visible(server_of(http).store, request_id, caller)
    shown = Card(request=request, viewer=caller.user, details_link=not full, eager=full)
    return render(http, "_card_one.html", {"card": shown, "csrf": caller.csrf or ""})


@router.get("/inbox/cards/{request_id}/panels/{kind}", response_class=HTMLResponse)
def panel(request_id: str, kind: str, http: HttpRequest, caller: PageCaller) -> HTMLResponse:
    """The form behind a card's edit, respond or reject button."""
    if kind not in PANELS:
        raise PageError(404, f"a card has no {kind!r} form; use {', '.join(PANELS)}")
    request = _visible(server_of(http).store, request_id, caller)
    return render(
        http,
        "_panel_one.html",
        {"card": Card(request=request, viewer=caller.user), "kind": kind, "csrf": caller.csrf or ""},
    )


@router.post("/inbox/cards/{request_id}/decide")
def decide(request_id: str, http: HttpRequest, caller: PageCaller, form: Form) -> Response:
    store = server_of(http).store
    current = _visible(store, request_id, caller)
    values = form_values(form)
    try:
        payload = decision_payload(current, values)
        decided = decide_as(server_of(http), request_id, payload, caller.user, channel=caller.channel)
    except SignoffError as exc:
        latest = _latest(store, current)
        kind = values.get("type", "")
        refused = Card(
            request=latest,
            viewer=caller.user,
            error=refusal_text(exc, latest),
            field_errors=field_errors_of(exc),
            open_panel=kind if kind in PANELS and not latest.is_terminal else None,
            submitted=values,
        )
        return _answer(http, caller, refused, status_code=exc.status_code)
    if not is_htmx(http):
        return RedirectResponse(f"/requests/{request_id}", status_code=303)
    notice, kind = DONE_WORDS[payload["type"]]
    if not decided.is_terminal:
        notice = f"Your approval is counted ({len(decided.approvals)} of {decided.rule.quorum})."
    elif decided.granted_id is not None:
        minutes = payload["grant"]["minutes"]
        notice = f"Approved, and calls like it for {minutes} minutes (revoke in Settings)."
    return _answer(http, caller, Card(request=decided, viewer=caller.user, notice=notice, notice_kind=kind))


@router.post("/inbox/cards/{request_id}/link", response_class=HTMLResponse)
def make_link(request_id: str, http: HttpRequest, caller: PageCaller) -> HTMLResponse:
    """A handle link to this card for the current person (to open it on a phone)."""
    server = server_of(http)
    request = _visible(server.store, request_id, caller)
    ttl = server.settings.handle_ttl
    secret, _ = server.store.issue_credential(
        "handle", caller.user.name, ttl=ttl, request_id=request.id, actor=caller.user.name, channel="web"
    )
    context = {
        "link": server.link(f"/h/{secret}"),
        "lasts": format_span(ttl.total_seconds()),
        "card": request,
    }
    return render(http, "_handle_link.html", context)


def _latest(store: Store, fallback: Request) -> Request:
    try:
        return store.get_request(fallback.id)
    except RequestNotFound:
        return fallback


def _answer(http: HttpRequest, caller: Caller, card: Card, *, status_code: int = 200) -> Response:
    if is_htmx(http):
        return render(
            http, "_card_one.html", {"card": card, "csrf": caller.csrf or ""}, status_code=status_code
        )
    return render_request_page(
        http, caller, replace(card, details_link=False, eager=True), status_code=status_code
    )
