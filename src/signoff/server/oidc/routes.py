"""`/login/oidc` sends a person to the provider; `/login/oidc/callback` brings them back signed
in, or to a page saying why not (audited as a refused sign-in, nothing created).

A sign-in's `state` is kept server-side with its nonce and PKCE verifier and spent once, and is
also held by the browser that started it (a short cookie), so a callback carried into another
browser, replayed, or for a sign-in this server did not start is refused.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from starlette.responses import RedirectResponse, Response

from ...errors import PermissionDenied, TooManySignIns
from ...identity import User
from ..context import server_of
from ..inbox.login import login_page_response, secure_cookies, start_session
from ..refusals import refuse_if_limited_now, refuse_sign_in_now
from .client import OidcClient, SignInFailed
from .people import missing_claims, person_of
from .settings import CALLBACK_PATH
from .signing_out import ID_TOKEN_COOKIE, oidc_client

router = APIRouter(include_in_schema=False)
STATE_COOKIE = "signoff_oidc_state"
STATE_MAX_AGE = 600
NOT_CONFIGURED = "This server does not sign people in through an identity provider."
NOT_STARTED = (
    "This sign-in was not started in this browser, was already finished, or took too long. Sign in again."
)


@router.get("/login/oidc")
def begin(http: HttpRequest) -> Response:
    """Start a sign-in at the provider."""
    from authlib.common.security import generate_token

    client = _client_or_page(http)
    if isinstance(client, Response):
        return client
    server = server_of(http)
    state, nonce, verifier = generate_token(43), generate_token(43), generate_token(64)
    try:
        url = client.authorization_url(state=state, nonce=nonce, code_verifier=verifier)
    except SignInFailed as failure:
        return refused(http, failure)
    server.store.begin_oidc_flow(state, nonce=nonce, code_verifier=verifier)
    response = RedirectResponse(url, status_code=303)
    response.set_cookie(
        STATE_COOKIE,
        state,
        max_age=STATE_MAX_AGE,
        path=CALLBACK_PATH,
        httponly=True,
        samesite="lax",
        secure=secure_cookies(http),
    )
    return response


@router.get(CALLBACK_PATH)
def callback(
    http: HttpRequest,
    state: str = "",
    code: str = "",
    error: str = "",
    error_description: str = "",
) -> Response:
    """The provider's answer: a code to exchange, or why it signed nobody in."""
    client = _client_or_page(http)
    if isinstance(client, Response):
        return client
    server = server_of(http)
    try:
        user, id_token = _sign_in(http, client, state=state, code=code, error=error, detail=error_description)
    except SignInFailed as failure:
        return refused(http, failure)
    response = start_session(http, user, method="oidc")
    response.set_cookie(
        ID_TOKEN_COOKIE,
        id_token,
        max_age=int(server.settings.session_ttl.total_seconds()),
        path="/",
        httponly=True,
        samesite="lax",
        secure=secure_cookies(http),
    )
    response.delete_cookie(STATE_COOKIE, path=CALLBACK_PATH, httponly=True, samesite="lax")
    return response


def _client_or_page(http: HttpRequest) -> OidcClient | Response:
    """The server's client, or the page for a server without one (404) or an address that has
    failed to sign in too often (429)."""
    client = oidc_client(http)
    if client is None:
        return login_page_response(http, problem=NOT_CONFIGURED, status_code=404)
    try:
        refuse_if_limited_now(server_of(http), http)
    except TooManySignIns as exc:
        return login_page_response(http, problem=exc.message, status_code=429, limited=exc)
    return client


def _sign_in(
    http: HttpRequest, client: OidcClient, *, state: str, code: str, error: str, detail: str
) -> tuple[User, str]:
    store = server_of(http).store
    if not state or http.cookies.get(STATE_COOKIE) != state:
        raise SignInFailed(NOT_STARTED, status=400)
    flow = store.spend_oidc_flow(state)
    if flow is None:
        raise SignInFailed(NOT_STARTED, status=400)
    if error:
        raise SignInFailed(f"The identity provider did not sign you in: {detail or error}.", status=401)
    if not code:
        raise SignInFailed("The identity provider sent no code. Sign in again.", status=400)
    nonce, verifier = flow
    tokens = client.exchange(code, verifier)
    id_token = tokens.get("id_token")
    if not isinstance(id_token, str) or not id_token:
        raise SignInFailed("The identity provider sent no ID token.", status=502)
    claims = client.id_token_claims(id_token, nonce=nonce)
    access_token = tokens.get("access_token")
    if missing_claims(claims, client.settings) and isinstance(access_token, str):
        info = client.userinfo(access_token, str(claims["sub"]))
        claims = {**info, **claims}
    person = person_of(claims, client.settings)
    try:
        user = store.sign_in_with_oidc(person, create_people=client.settings.create_people)
    except PermissionDenied as refusal:
        raise SignInFailed(refusal.message, status=403) from None
    server_of(http).callers.clear()  # groups may have changed: callers are read again
    return user, id_token


def refused(http: HttpRequest, failure: SignInFailed) -> Response:
    """The page a failed sign-in gets, counted and audited as one (`auth.refused`)."""
    refuse_sign_in_now(server_of(http), http, f"identity provider: {failure.message}")
    response = login_page_response(http, problem=failure.message, status_code=failure.status, retry=True)
    response.delete_cookie(STATE_COOKIE, path=CALLBACK_PATH, httponly=True, samesite="lax")
    return response
