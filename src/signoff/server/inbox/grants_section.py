"""The standing grants on `/settings` (`signoff.grants`): those in force a person gave (an admin:
everyone's), each with whom it covers and until when, revoked there at once. The form works with
htmx (the section is swapped in place) and without (a redirect, or the page with the error)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from starlette.responses import HTMLResponse, RedirectResponse, Response

from ..._util import utcnow
from ...errors import SignoffError
from ...grants import Grant
from ...identity import User
from ..context import server_of
from .page_access import PageCaller, is_htmx
from .rendering import absolute, render

router = APIRouter(include_in_schema=False)


def grants_context(http: HttpRequest, user: User, **said: Any) -> dict[str, Any]:
    """What the grants' section shows `user`: the grants in force they gave (an admin: everyone's),
    newest first."""
    now = utcnow()
    rows = [
        {
            "grant": grant,
            "covers": covers_text(grant),
            "until": absolute(grant.expires_at),
            "revocable": grant.granted_by == user.name or user.is_admin,
            "status": grant.status(now),
        }
        for grant in server_of(http).store.list_grants(granted_by=None if user.is_admin else user.name)
    ]
    return {"grants": rows, "grants_error": said.get("error"), "grants_notice": said.get("notice")}


def covers_text(grant: Grant) -> str:
    if grant.scope == "app":
        return f"any agent of app {grant.app}"
    if grant.scope == "thread":
        return f"thread {grant.thread_id} of {grant.creator}"
    agent = f"{grant.agent} ({grant.creator})" if grant.agent else str(grant.creator)
    return f"agent {agent}"


@router.post("/settings/grants/{grant_id}/revoke", response_class=HTMLResponse)
def revoke(grant_id: str, http: HttpRequest, caller: PageCaller) -> Response:
    store = server_of(http).store
    user = caller.user
    said: dict[str, Any]
    status = 200
    try:
        grant = store.revoke_grant(grant_id, actor=user.name, channel="web", admin=user.is_admin)
        said = {"notice": f"Revoked: {grant.tool_name} calls it covered are asked about again."}
    except SignoffError as exc:
        said, status = {"error": exc.message}, exc.status_code
    if is_htmx(http):
        context = {"csrf": caller.csrf or "", **grants_context(http, user, **said)}
        return render(http, "_grants.html", context, status_code=status)
    if status == 200:
        return RedirectResponse("/settings", status_code=303)
    from .settings_page import page_with

    return page_with(http, caller, status=status, grants=grants_context(http, user, **said))
