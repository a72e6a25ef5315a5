"""Signing in with a one-time link, and signing out.

`signoff login-link --user NAME` (or the first start of `signoff serve`) prints
`<base_url>/login?token=so_log_…`. Opening it spends the link and starts a session: an HttpOnly,
SameSite=Lax cookie (Secure behind HTTPS) holding an opaque secret the store keeps hashed.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from starlette.responses import RedirectResponse, Response

from ..access import SESSION_COOKIE
from ..context import server_of
from .page_access import PageCaller
from .rendering import SECRET_URL_HEADERS, page_context, render

router = APIRouter(include_in_schema=False)


@router.get("/login")
def login(http: HttpRequest, token: str | None = None, signed_out: bool = False) -> Response:
    server = server_of(http)
    store = server.store
    current = http.cookies.get(SESSION_COOKIE)
    if not token:
        if current and store.session_of(current) is not None:
            return RedirectResponse("/", status_code=303)
        return _login_page(http, problem=None, signed_out=signed_out)
    user = store.use_login_link(token)
    if user is None:
        problem = "This sign-in link has already been used, has expired, or is not a sign-in link."
        return _login_page(http, problem=problem, signed_out=False, status_code=401)
    if current:
        store.revoke_credential(secret=current, actor=user.name, channel="web")
        server.callers.clear()
    ttl = server.settings.session_ttl
    secret, _ = store.issue_credential("session", user.name, ttl=ttl, actor=user.name, channel="web")
    response = RedirectResponse("/", status_code=303, headers=SECRET_URL_HEADERS)
    response.set_cookie(
        SESSION_COOKIE,
        secret,
        max_age=int(ttl.total_seconds()),
        path="/",
        httponly=True,
        samesite="lax",
        secure=server.settings.secure_cookies,
    )
    return response


@router.post("/logout")
def logout(http: HttpRequest, caller: PageCaller) -> Response:
    if caller.session is not None:
        server = server_of(http)
        server.store.revoke_credential(secret=caller.session, actor=caller.user.name, channel="web")
        server.callers.clear()
    response = RedirectResponse("/login?signed_out=1", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax")
    return response


def _login_page(
    http: HttpRequest, *, problem: str | None, signed_out: bool, status_code: int = 200
) -> Response:
    context = page_context(http, None, active="login")
    context.update(problem=problem, signed_out=signed_out)
    return render(http, "login.html", context, status_code=status_code, headers=SECRET_URL_HEADERS)
