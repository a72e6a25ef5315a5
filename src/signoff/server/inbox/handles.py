"""Handle links, `/h/{secret}`: a card opened from a mail, a chat or a phone, without signing in.

A handle names one request and the person it was made for, and expires. Opening it (GET) only
shows the request and its buttons: mail scanners and link previews fetch links, so nothing is
decided until the person presses a button (POST), as the handle's person, on channel "link".
The handle itself is the credential, so these forms carry no CSRF token; instead a POST sent
from another site's page is refused, as `/login` refuses one. A handle is its person's alone: in
a browser signed in to signoff as somebody else (a forwarded mail's link), it shows and decides
nothing. Both refusals are audited.
"""

from __future__ import annotations

from dataclasses import replace

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from starlette.responses import HTMLResponse

from ...errors import PermissionDenied, RequestNotFound, SignoffError, TooManySignIns
from ...identity import User
from ...presentation.cards import DONE_WORDS, PANELS, Card, field_errors_of
from ...presentation.decision_form import decision_payload, form_values
from ...presentation.refusals import refusal_text
from ...requests import Request
from ..access import SESSION_COOKIE, can_see
from ..context import server_of
from ..deciding import decide_as
from ..refusals import audit_refusal, refuse_if_limited_now, refuse_sign_in_now
from .page_access import Form, cross_site, retry_after
from .rendering import SECRET_URL_HEADERS, page_context, render

router = APIRouter(include_in_schema=False)
CHANNEL = "link"
HINTS = {
    "approve": "You chose Approve: press Approve below to confirm. Nothing is decided until you do.",
    "edit": "You chose Edit: change the arguments below and press Approve with changes.",
    "reject": "You chose Reject: give a reason if you like, and press Reject below to confirm.",
    "respond": "Write your answer below and send it.",
}
"""What a handle page opened from a mail's button says (`?decision=`)."""
OTHER_SESSION = (
    "This link was made for {holder}, but this browser is signed in to signoff as {viewer}, so it "
    "was refused: nothing was shown or decided. Open it where {holder} uses signoff, or sign out first."
)
CROSS_SITE = (
    "This decision was sent from another site's page, so it was refused: nothing was decided. "
    "Open the link itself and press the button there."
)
UNKNOWN = (
    "This link does not work any more: it has expired or was never issued. "
    "Open the inbox, or ask for a new link."
)


def _holder(http: HttpRequest, secret: str) -> tuple[User, Request] | None:
    """The handle's person and request; None when the handle is unknown or expired (a failed
    sign-in), or the person may no longer see the request. TooManySignIns when this address has
    failed too often of late."""
    server = server_of(http)
    store = server.store
    refuse_if_limited_now(server, http)
    found = store.handle_of(secret)
    if found is None:
        refuse_sign_in_now(server, http, UNKNOWN)
        return None
    user, request_id = found
    try:
        request = store.get_request(request_id)
    except RequestNotFound:
        return None
    user = replace(user, groups=tuple(store.groups_of(user.name)))
    return (user, request) if can_see(request, user) else None


def _page(
    http: HttpRequest,
    user: User | None,
    card: Card | None,
    *,
    status_code: int = 200,
    problem: str | None = None,
    limited: TooManySignIns | None = None,
) -> HTMLResponse:
    context = page_context(http, None, active="handle")
    context.update(holder=user, card=card, unknown=UNKNOWN, problem=problem, limited=limited is not None)
    headers = {**SECRET_URL_HEADERS, **(retry_after(limited) if limited is not None else {})}
    return render(http, "handle.html", context, status_code=status_code, headers=headers)


def _refused(http: HttpRequest, user: User, request: Request, *, deciding: bool) -> HTMLResponse | None:
    """The refusal page (audited) when this handle may not be used here: inside another
    person's session, or (a decision) posted from another site's page; else None."""
    store = server_of(http).store
    session = http.cookies.get(SESSION_COOKIE)
    signed_in = store.session_of(session) if session else None
    data: dict[str, str | None] = {"method": http.method, "path": "/h/…"}  # never the secret
    if signed_in is not None and signed_in[0].name != user.name:
        viewer = signed_in[0]
        problem = OTHER_SESSION.format(holder=user.label, viewer=viewer.label)
        actor = viewer.name
        data["holder"] = user.name
    elif deciding and cross_site(http):
        problem = CROSS_SITE
        actor = user.name
        data["origin"] = http.headers.get("origin") or http.headers.get("referer")
    else:
        return None
    audit_refusal(
        store, PermissionDenied(problem), actor=actor, channel=CHANNEL, request_id=request.id, data=data
    )
    return _page(http, None, None, status_code=403, problem=problem)


@router.get("/h/{secret}", response_class=HTMLResponse)
def show(secret: str, http: HttpRequest, decision: str | None = None) -> HTMLResponse:
    """The request and its buttons. `?decision=reject` (a mail's button) opens that decision's
    form, or says which button confirms it; it never decides: only the POST does."""
    try:
        found = _holder(http, secret)
    except TooManySignIns as exc:
        return _page(http, None, None, status_code=429, problem=exc.message, limited=exc)
    if found is None:
        return _page(http, None, None, status_code=404)
    user, request = found
    refused = _refused(http, user, request, deciding=False)
    if refused is not None:
        return refused
    card = Card(request=request, viewer=user, mode="link", decide_url=f"/h/{secret}")
    if decision is not None and card.decidable and card.viewer_decides and decision in card.actions:
        hint = HINTS[decision]
        card = replace(
            card, open_panel=decision if decision in PANELS else None, notice=hint, notice_kind="info"
        )
    return _page(http, user, card)


@router.post("/h/{secret}", response_class=HTMLResponse)
def decide(secret: str, http: HttpRequest, form: Form) -> HTMLResponse:
    try:
        found = _holder(http, secret)
    except TooManySignIns as exc:
        return _page(http, None, None, status_code=429, problem=exc.message, limited=exc)
    if found is None:
        return _page(http, None, None, status_code=404)
    user, request = found
    refused = _refused(http, user, request, deciding=True)
    if refused is not None:
        return refused
    values = form_values(form)
    store = server_of(http).store
    try:
        payload = decision_payload(request, values)
        decided = decide_as(server_of(http), request.id, payload, user, channel=CHANNEL)
    except SignoffError as exc:
        latest = store.get_request(request.id)
        kind = values.get("type", "")
        card = Card(
            request=latest,
            viewer=user,
            mode="link",
            decide_url=f"/h/{secret}",
            error=refusal_text(exc, latest),
            field_errors=field_errors_of(exc),
            open_panel=kind if kind in PANELS and not latest.is_terminal else None,
            submitted=values,
        )
        return _page(http, user, card, status_code=exc.status_code)
    notice, kind = DONE_WORDS[payload["type"]]
    if not decided.is_terminal:
        notice = f"Your approval is counted ({len(decided.approvals)} of {decided.rule.quorum})."
    card = Card(
        request=decided, viewer=user, mode="link", decide_url=f"/h/{secret}", notice=notice, notice_kind=kind
    )
    return _page(http, user, card)
