"""Signing in with a one-time link, and signing out.

`signoff login-link --user NAME` (or the first start of `signoff serve`) prints
`<base_url>/login?token=so_log_…`. Opening it (GET) only shows "Sign in as …": chat unfurlers,
link previews and mail scanners fetch links, and must not get the session. Its button (POST)
spends the link and starts a session: an HttpOnly, SameSite=Lax cookie holding an opaque secret
the store keeps hashed, Secure when people reach the server over HTTPS (an https base URL, or a
proxy trusted with `signoff serve --forwarded-allow-ips` that says so in X-Forwarded-Proto).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from starlette.responses import RedirectResponse, Response

from ...errors import PermissionDenied, TooManySignIns
from ...identity import User
from ..access import SESSION_COOKIE
from ..context import server_of
from ..refusals import ANONYMOUS, audit_refusal, refuse_if_limited_now, refuse_sign_in_now
from .page_access import Form, PageCaller, cross_site, retry_after
from .rendering import SECRET_URL_HEADERS, page_context, render

router = APIRouter(include_in_schema=False)
SPENT = "This sign-in link has already been used, has expired, or is not a sign-in link."
CROSS_SITE = "Sign in from the link itself: this sign-in came from another site, so it was refused."


@router.get("/login")
def login_page(http: HttpRequest, token: str | None = None, signed_out: bool = False) -> Response:
    """Without a token, how to get one; with one, the person it signs in and a button (nothing spent)."""
    server = server_of(http)
    store = server.store
    current = http.cookies.get(SESSION_COOKIE)
    session = store.session_of(current) if current else None
    if not token:
        if session is not None:
            return RedirectResponse("/", status_code=303)
        return _login_page(http, problem=None, signed_out=signed_out)
    try:
        refuse_if_limited_now(server, http)
    except TooManySignIns as exc:
        return _login_page(http, problem=exc.message, signed_out=False, status_code=429, limited=exc)
    user = store.authenticate(token, "login")
    if user is None:
        refuse_sign_in_now(server, http, SPENT)
        return _login_page(http, problem=SPENT, signed_out=False, status_code=401)
    signed_in_as = session[0] if session is not None else None
    return _login_page(
        http, problem=None, signed_out=False, confirm=user, token=token, signed_in_as=signed_in_as
    )


@router.post("/login")
def login(http: HttpRequest, form: Form) -> Response:
    """Spend the link and start the session."""
    server = server_of(http)
    store = server.store
    token = form.get("token")
    if not isinstance(token, str) or not token:
        refuse_sign_in_now(server, http, SPENT)
        return _login_page(http, problem=SPENT, signed_out=False, status_code=401)
    if cross_site(http):
        refused = PermissionDenied(CROSS_SITE)
        data = {"path": http.url.path, "origin": http.headers.get("origin") or http.headers.get("referer")}
        audit_refusal(store, refused, actor=ANONYMOUS, channel="web", data=data)
        return _login_page(http, problem=CROSS_SITE, signed_out=False, status_code=403)
    try:
        refuse_if_limited_now(server, http)
    except TooManySignIns as exc:
        return _login_page(http, problem=exc.message, signed_out=False, status_code=429, limited=exc)
    user = store.use_login_link(token)
    if user is None:
        refuse_sign_in_now(server, http, SPENT)
        return _login_page(http, problem=SPENT, signed_out=False, status_code=401)
    current = http.cookies.get(SESSION_COOKIE)
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
        secure=secure_cookies(http),
    )
    return response


@router.post("/logout")
def logout(http: HttpRequest, caller: PageCaller) -> Response:
    if caller.session is not None:
        server = server_of(http)
        server.store.revoke_credential(secret=caller.session, actor=caller.user.name, channel="web")
        server.callers.clear()
    response = RedirectResponse("/login?signed_out=1", status_code=303)
    response.delete_cookie(
        SESSION_COOKIE, path="/", httponly=True, samesite="lax", secure=secure_cookies(http)
    )
    return response


def secure_cookies(http: HttpRequest) -> bool:
    """Whether the session cookie is Secure: set so, or people reach the server over HTTPS (its
    base URL, or this request's scheme, which uvicorn takes from X-Forwarded-Proto only when the
    proxy sending it is trusted: `--forwarded-allow-ips`)."""
    settings = server_of(http).settings
    https_url = urlsplit(settings.base_url).scheme == "https"
    return settings.secure_cookies or https_url or http.url.scheme == "https"


def _login_page(
    http: HttpRequest,
    *,
    problem: str | None,
    signed_out: bool,
    status_code: int = 200,
    confirm: User | None = None,
    token: str = "",
    signed_in_as: User | None = None,
    limited: TooManySignIns | None = None,
) -> Response:
    context = page_context(http, None, active="login")
    context.update(
        problem=problem, signed_out=signed_out, confirm=confirm, token=token, signed_in_as=signed_in_as
    )
    headers = {**SECRET_URL_HEADERS, **(retry_after(limited) if limited is not None else {})}
    return render(http, "login.html", context, status_code=status_code, headers=headers)
