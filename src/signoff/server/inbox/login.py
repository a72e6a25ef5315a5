"""Signing in with a one-time link, and signing out.

`signoff login-link --user NAME` (or the first start of `signoff serve`) prints
`<base_url>/login?token=so_log_…`. Opening it (GET) only shows "Sign in as …": chat unfurlers,
link previews and mail scanners fetch links, and must not get the session. Its button (POST)
spends the link and starts a session: an HttpOnly, SameSite=Lax cookie holding an opaque secret
the store keeps hashed, Secure when people reach the server over HTTPS (an https base URL, or a
proxy trusted with `signoff serve --forwarded-allow-ips` that says so in X-Forwarded-Proto).

With an identity provider (`signoff serve --oidc-issuer`, `signoff.server.oidc`) the page offers
its button too; `--oidc-only` keeps login links for the first admin alone (bootstrap and
break-glass). Every sign-in ends in `start_session`.
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
from ..oidc.signing_out import ID_TOKEN_COOKIE, end_session_url, oidc_client
from ..refusals import ANONYMOUS, audit_refusal, refuse_if_limited_now, refuse_sign_in_now
from .page_access import Form, PageCaller, cross_site, retry_after
from .rendering import SECRET_URL_HEADERS, page_context, render

router = APIRouter(include_in_schema=False)
SPENT = "This sign-in link has already been used, has expired, or is not a sign-in link."
CROSS_SITE = "Sign in from the link itself: this sign-in came from another site, so it was refused."
PROVIDER_ONLY = (
    "This server signs people in through its identity provider: use the button below. "
    "Login links sign in only its first admin."
)


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
    if not link_may_sign_in(http, user):
        refuse_sign_in_now(server, http, PROVIDER_ONLY)
        return _login_page(http, problem=PROVIDER_ONLY, signed_out=False, status_code=403)
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
    linked = store.authenticate(token, "login")
    if linked is not None and not link_may_sign_in(http, linked):
        refuse_sign_in_now(server, http, PROVIDER_ONLY)
        return _login_page(http, problem=PROVIDER_ONLY, signed_out=False, status_code=403)
    user = store.use_login_link(token)
    if user is None:
        refuse_sign_in_now(server, http, SPENT)
        return _login_page(http, problem=SPENT, signed_out=False, status_code=401)
    return start_session(http, user, method="link")


def start_session(http: HttpRequest, user: User, *, method: str) -> Response:
    """Start `user`'s web session (any earlier one of this browser ends): every sign-in, by a
    login link (`method="link"`) or through the identity provider (`"oidc"`), ends here. The
    answer goes to the inbox with the session cookie; it lives the server's `session_ttl`
    (`signoff serve --session-max-age`). The sign-in itself was recorded (method and time, for
    the People page) where it was checked: `use_login_link`, `sign_in_with_oidc`."""
    server = server_of(http)
    store = server.store
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
    if method != "oidc":
        response.delete_cookie(ID_TOKEN_COOKIE, path="/", httponly=True, samesite="lax")
    return response


def link_may_sign_in(http: HttpRequest, user: User) -> bool:
    """Under `--oidc-only`, a login link signs in the first admin alone."""
    client = oidc_client(http)
    if client is None or not client.settings.only:
        return True
    return user.name == server_of(http).store.first_admin()


@router.post("/logout")
def logout(http: HttpRequest, caller: PageCaller) -> Response:
    if caller.session is not None:
        server = server_of(http)
        server.store.revoke_credential(secret=caller.session, actor=caller.user.name, channel="web")
        server.callers.clear()
    provider_end = end_session_url(http) if caller.session is not None else None
    response = RedirectResponse(provider_end or "/login?signed_out=1", status_code=303)
    response.delete_cookie(
        SESSION_COOKIE, path="/", httponly=True, samesite="lax", secure=secure_cookies(http)
    )
    response.delete_cookie(
        ID_TOKEN_COOKIE, path="/", httponly=True, samesite="lax", secure=secure_cookies(http)
    )
    return response


def secure_cookies(http: HttpRequest) -> bool:
    """Whether the session cookie is Secure: set so, or people reach the server over HTTPS (its
    base URL, or this request's scheme, which uvicorn takes from X-Forwarded-Proto only when the
    proxy sending it is trusted: `--forwarded-allow-ips`)."""
    settings = server_of(http).settings
    https_url = urlsplit(settings.base_url).scheme == "https"
    return settings.secure_cookies or https_url or http.url.scheme == "https"


def login_page_response(
    http: HttpRequest,
    *,
    problem: str | None,
    status_code: int,
    limited: TooManySignIns | None = None,
    retry: bool = False,
) -> Response:
    """The sign-in page saying why a sign-in failed (`retry`: with a link to try the provider again)."""
    return _login_page(
        http, problem=problem, signed_out=False, status_code=status_code, limited=limited, retry=retry
    )


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
    retry: bool = False,
) -> Response:
    context = page_context(http, None, active="login")
    client = oidc_client(http)
    context.update(
        problem=problem,
        signed_out=signed_out,
        confirm=confirm,
        token=token,
        signed_in_as=signed_in_as,
        provider=urlsplit(client.settings.issuer).hostname if client is not None else None,
        provider_only=client is not None and client.settings.only,
        retry=retry and client is not None,
    )
    headers = {**SECRET_URL_HEADERS, **(retry_after(limited) if limited is not None else {})}
    return render(http, "login.html", context, status_code=status_code, headers=headers)
