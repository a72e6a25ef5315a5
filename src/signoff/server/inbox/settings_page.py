"""`/settings`: a person's own addresses on the channels (Slack, WeCom, Feishu, email, a text
chat), where the requests naming them are sent (DESIGN §9). An address set here counts once the
person enters the code sent there ("enter code"; "send a new code" for another): until then
nothing is sent there and nothing from it decides. The standing grants in force are listed
there too, to revoke (`grants_section`). The forms work with htmx (the addresses'
section is swapped in place) and without (a redirect, or the page with the error)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from starlette.responses import HTMLResponse, RedirectResponse, Response

from ..._util import utcnow
from ...errors import SignoffError
from ...identity import ADDRESS_KINDS
from ...store.address_codes import MAX_TRIES
from ...store.address_ops import AddressState
from ...store.outbox_ops import OutboxRow
from ..addresses import code_channel, send_code_as, set_address_as, verify_as
from ..context import server_of
from .grants_section import grants_context
from .page_access import Form, PageCaller, is_htmx
from .rendering import absolute, page_context, render

router = APIRouter(include_in_schema=False)
KIND_LABELS = {
    "slack": "Slack user id (U…)",
    "wecom": "WeCom (企业微信) user id",
    "feishu": "Feishu (飞书) open id (ou_…)",
    "email": "Email address",
}


def _context(http: HttpRequest, caller: PageCaller, **said: Any) -> dict[str, Any]:
    server = server_of(http)
    context = page_context(http, caller, active="settings")
    addresses = []
    for state in server.store.address_states(caller.user.name):
        via = None if state.verified else code_channel(server, state.kind)
        takes_code = not state.verified and (via is not None or state.code_expires_at is not None)
        note = _note(state, via, server.store.last_code_delivery(caller.user.name, state.address))
        addresses.append({"state": state, "code_channel": via, "takes_code": takes_code, "note": note})
    context.update(
        addresses=addresses,
        kinds=[(kind, KIND_LABELS[kind]) for kind in ADDRESS_KINDS if kind in KIND_LABELS],
        channels=server.channels.describe(),
        error=said.get("error"),
        notice=said.get("notice"),
    )
    context.update(grants_context(http, caller.user))
    return context


def page_with(http: HttpRequest, caller: PageCaller, *, status: int, grants: dict[str, Any]) -> Response:
    """The settings page with the grants' section as given (what a form posted without htmx said)."""
    context = _context(http, caller)
    context.update(grants)
    return render(http, "settings.html", context, status_code=status)


def _answer(http: HttpRequest, caller: PageCaller, *, status: int = 200, **said: Any) -> Response:
    """The addresses' section (htmx), a redirect to the page (a form posted without htmx, done),
    or the page saying what went wrong."""
    if is_htmx(http):
        return render(http, "_addresses.html", _context(http, caller, **said), status_code=status)
    if said.get("error") is None:
        return RedirectResponse("/settings", status_code=303)
    return render(http, "settings.html", _context(http, caller, **said), status_code=status)


@router.get("/settings", response_class=HTMLResponse)
def settings(http: HttpRequest, caller: PageCaller) -> HTMLResponse:
    return render(http, "settings.html", _context(http, caller))


@router.post("/settings/addresses", response_class=HTMLResponse)
def set_address(http: HttpRequest, caller: PageCaller, form: Form) -> Response:
    kind = _kind(form)
    server, me = server_of(http), caller.user.name
    try:
        if form.get("remove"):
            server.store.remove_address(me, kind, actor=me, channel="web")
            return _answer(http, caller, notice=f"Removed your {kind} address.")
        claimed = set_address_as(server, caller.user, me, kind, str(form.get("address", "")), channel="web")
    except SignoffError as exc:
        return _answer(http, caller, error=exc.message, status=exc.status_code)
    state = claimed.state
    if state.verified:
        notice = f"Your {state.kind} address {state.address} is verified: requests reach you there."
    elif claimed.code_via is not None:
        notice = f"A code is on its way to {state.address} (through {claimed.code_via}): enter it below."
    else:
        notice = f"Saved {state.address}; it counts once verified."
    return _answer(http, caller, notice=notice)


@router.post("/settings/addresses/code", response_class=HTMLResponse)
def send_code(http: HttpRequest, caller: PageCaller, form: Form) -> Response:
    kind = _kind(form)
    try:
        state = send_code_as(server_of(http), caller.user, caller.user.name, kind, channel="web")
    except SignoffError as exc:
        return _answer(http, caller, error=exc.message, status=exc.status_code)
    return _answer(http, caller, notice=f"A new code is on its way to {state.address}: enter it below.")


@router.post("/settings/addresses/verify", response_class=HTMLResponse)
def verify(http: HttpRequest, caller: PageCaller, form: Form) -> Response:
    kind = _kind(form)
    code = str(form.get("code", ""))
    try:
        state = verify_as(server_of(http), caller.user, caller.user.name, kind, code, channel="web")
    except SignoffError as exc:
        return _answer(http, caller, error=exc.message, status=exc.status_code)
    return _answer(http, caller, notice=f"Verified: requests now reach you at {state.address}.")


def _note(state: AddressState, via: str | None, sending: OutboxRow | None) -> str:
    """Where the address's verification stands, in a sentence."""
    if state.verified:
        return f"by {state.verified_by}, {absolute(state.verified_at)}"
    if via is None:
        return "No channel on this server can send it a code: an admin can set it for you."
    if sending is not None and sending.state == "dead":  # the newest code never arrived
        return f"The code could not be sent ({sending.last_error}): send a new one, or ask an admin."
    if sending is not None and sending.state == "pending":
        trouble = f"; the last try failed: {sending.last_error}" if sending.last_error else ""
        return f"A code is on its way (through {sending.channel}{trouble})."
    expires = state.code_expires_at
    if expires is not None and expires > utcnow() and state.code_tries < MAX_TRIES:
        return f"Enter the code sent there (it works until {absolute(expires)})."
    return "That code is used up or expired: send a new one."


def _kind(form: Form) -> str:
    kind = str(form.get("kind", "")).strip()
    return f"text:{str(form.get('platform', '')).strip()}" if kind == "text" else kind
