"""Who may see, decide and manage which request (DESIGN §8), and who is asking.

An agent sees only the requests it created. A person sees the requests naming them (as a user,
or a `group:NAME` of theirs; a rule naming no approvers names the request's requester), or
naming nobody (no approvers and no requester: any person, never another agent). Admins see
everything. Only approvers decide (admins too only when they are one). The
creator (an agent) may update its drafts, cancel, record executions.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Annotated, TypedDict

from fastapi import Depends
from fastapi import Request as HttpRequest
from starlette.concurrency import run_in_threadpool

from ..decision_checks import may_decide
from ..errors import NotAnApprover, NotAuthenticated, PermissionDenied
from ..identity import User, kind_of
from ..presentation.previews import brief_view
from ..requests import Request
from ..store import Store
from .context import Server, server_of
from .refusals import audit_refusal, refuse_if_limited, refuse_sign_in

SESSION_COOKIE = "signoff_session"
CSRF_HEADER = "x-csrf-token"
CSRF_FIELD = "csrf_token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def can_see(request: Request, user: User) -> bool:
    """Whether `user` may see `request` at all: anywhere it is read, listed, waited on or streamed."""
    if user.is_admin:
        return True
    if user.is_agent:
        return request.created_by == user.name
    return request.created_by == user.name or may_decide(request, user.name, user.groups)


class ListingFilter(TypedDict, total=False):
    visible_to: str
    created_by: str


def listing_filter(user: User) -> ListingFilter:
    """The `list_requests` filters that keep exactly the requests `can_see` lets `user` see."""
    if user.is_admin:
        return {}
    if user.is_agent:
        return {"created_by": user.name}
    return {"visible_to": user.name}


def is_creator(request: Request, user: User) -> bool:
    return request.created_by == user.name


def can_manage(request: Request, user: User) -> bool:
    """Drafts, executions and cancelling belong to the agent that asked (and to admins)."""
    return user.is_admin or is_creator(request, user)


def visible_request(store: Store, request_id: str, user: User, *, channel: str = "api") -> Request:
    """The request if `user` may see it: 404 when there is none, 403 (audited) when not theirs."""
    request = store.get_request(request_id)
    if not can_see(request, user):
        raise audit_refusal(
            store,
            NotAnApprover(f"{user.name} is not an approver of request {request_id}"),
            actor=user.name,
            channel=channel,
            request_id=request_id,
            action="request.view_refused",
        )
    return request


def managed_request(store: Store, request_id: str, user: User, *, what: str, channel: str = "api") -> Request:
    request = visible_request(store, request_id, user, channel=channel)
    if not can_manage(request, user):
        raise audit_refusal(
            store,
            PermissionDenied(f"only the agent that asked (or an admin) may {what} request {request_id}"),
            actor=user.name,
            channel=channel,
            request_id=request_id,
            action="request.change_refused",
        )
    return request


def request_view(request: Request, user: User, *, brief: bool = False) -> dict[str, object]:
    """The JSON a caller gets: redacted for people; the asking agent also gets the full record.
    `brief` (lists, events) cuts long values and says so in `truncated` (see `previews`)."""
    view = request.to_dict()
    if brief:
        brief_view(view)
    else:
        view["truncated"] = False
    if is_creator(request, user):
        view["record"] = request.to_record()
    return view


def require_admin(user: User) -> None:
    if not user.is_admin:
        raise PermissionDenied(f"{user.name} is not an admin")


class Caller:
    """The authenticated user of one HTTP request, and how they authenticated."""

    def __init__(
        self, user: User, *, session: str | None = None, csrf: str | None = None, owner: str | None = None
    ) -> None:
        self.user = user
        self.session = session
        self.csrf = csrf
        self.owner = owner if session is None else user.name
        """Who owns the credential: an API token's owner (`Credential.owner`); a session's user."""

    @property
    def channel(self) -> str:
        return "web" if self.session is not None else "api"


def _identify(store: Store, authorization: str | None, session: str | None) -> Caller:
    if authorization:
        scheme, _, secret = authorization.partition(" ")
        secret = secret.strip()
        if scheme.lower() != "bearer" or not secret:
            raise NotAuthenticated("use 'Authorization: Bearer <token>'")
        found = store.authenticate_token(secret) if kind_of(secret) == "token" else None
        if found is None:
            raise NotAuthenticated("the API token is invalid, expired or revoked")
        user, owner = found
        return Caller(replace(user, groups=tuple(store.groups_of(user.name))), owner=owner)
    if session:
        found = store.session_of(session)
        if found is not None:
            user, csrf = found
            return Caller(replace(user, groups=tuple(store.groups_of(user.name))), session=session, csrf=csrf)
    raise NotAuthenticated()


class CallerCache:
    """Who a secret belonged to, for a second or two: an agent's burst of calls costs one
    lookup, and a revoked token or a disabled user stops working within `ttl` seconds."""

    def __init__(self, ttl: float = 2.0, size: int = 4096) -> None:
        self.ttl = ttl
        self.size = size
        self._entries: dict[tuple[str | None, str | None], tuple[float, Caller]] = {}

    def get(self, key: tuple[str | None, str | None]) -> Caller | None:
        found = self._entries.get(key)
        if found is None or found[0] < time.monotonic():
            return None
        return found[1]

    def clear(self) -> None:
        """Forget everything (after a revocation made through this server)."""
        self._entries.clear()

    def put(self, key: tuple[str | None, str | None], caller: Caller) -> None:
        if len(self._entries) >= self.size:
            self._entries.clear()
        self._entries[key] = (time.monotonic() + self.ttl, caller)


async def identify(server: Server, authorization: str | None, session: str | None) -> Caller:
    """Who holds these credentials now (remembered for `callers.ttl` seconds); NotAuthenticated
    when the token or session is not (or no longer) valid or the user is disabled."""
    key = (authorization, session)
    caller = server.callers.get(key)
    if caller is None:
        caller = await run_in_threadpool(_identify, server.store, *key)
        server.callers.put(key, caller)
    return caller


async def authenticate(request: HttpRequest) -> Caller:
    """Bearer token, or the web session cookie (then every unsafe method needs the CSRF token,
    in the `X-CSRF-Token` header or a `csrf_token` form field). A failed sign-in is counted and
    audited (see `refusals`), and so is a missing or wrong CSRF token; an address past its
    failed sign-ins' limit gets TooManySignIns before its credential is looked at
    (`sign_in_limit`)."""
    return await _authenticate(request, page=False)


async def authenticate_page(request: HttpRequest) -> Caller:
    """`authenticate` for an inbox page: a visit without any credential is not a failed
    sign-in (the page sends the person to sign in)."""
    return await _authenticate(request, page=True)


async def _authenticate(request: HttpRequest, *, page: bool) -> Caller:
    server: Server = server_of(request)
    authorization = request.headers.get("authorization")
    # a bearer token is who calls whatever cookie comes with it: its cookies go unparsed
    key = (authorization, None if authorization else request.cookies.get(SESSION_COOKIE))
    if key != (None, None):
        await refuse_if_limited(server, request, channel="api" if key[0] else "web")
    try:
        caller = await identify(server, *key)
    except NotAuthenticated as exc:
        if not page or key != (None, None):
            await refuse_sign_in(server, request, exc)
        raise
    request.state.caller = caller
    if caller.session is not None and request.method not in SAFE_METHODS:
        sent = request.headers.get(CSRF_HEADER)
        if sent is None and request.headers.get("content-type", "").startswith(
            ("application/x-www-form-urlencoded", "multipart/form-data")
        ):
            form = await request.form()
            value = form.get(CSRF_FIELD)
            sent = value if isinstance(value, str) else None
        if sent != caller.csrf:
            refused = PermissionDenied("missing or wrong CSRF token; reload the page and try again")
            data = {"method": request.method, "path": request.url.path}
            await server.run(
                audit_refusal, server.store, refused, actor=caller.user.name, channel="web", data=data
            )
            raise refused
    return caller


async def current_user(caller: Annotated[Caller, Depends(authenticate)]) -> User:
    return caller.user


CurrentCaller = Annotated[Caller, Depends(authenticate)]
CurrentUser = Annotated[User, Depends(current_user)]
