"""Who may see, decide and manage which request (DESIGN §8), and who is asking.

A request is visible to its approvers (users, or members of `group:NAME`), to everybody when it
names none, to the user who created it, and to admins. Only approvers decide (admins too only
when they are one). The creator (an agent) may update its drafts, cancel, record executions.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Annotated

from fastapi import Depends
from fastapi import Request as HttpRequest
from starlette.concurrency import run_in_threadpool

from ..errors import NotAnApprover, NotAuthenticated, PermissionDenied
from ..identity import User, kind_of
from ..requests import Request
from ..store import Store
from ..store.request_ops import may_decide
from .context import Server, server_of

SESSION_COOKIE = "signoff_session"
CSRF_HEADER = "x-csrf-token"
CSRF_FIELD = "csrf_token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def can_see(request: Request, user: User) -> bool:
    return user.is_admin or request.created_by == user.name or may_decide(request, user.name, user.groups)


def is_creator(request: Request, user: User) -> bool:
    return request.created_by == user.name


def can_manage(request: Request, user: User) -> bool:
    """Drafts, executions and cancelling belong to the agent that asked (and to admins)."""
    return user.is_admin or is_creator(request, user)


def visible_request(store: Store, request_id: str, user: User, *, channel: str = "api") -> Request:
    """The request if `user` may see it: 404 when there is none, 403 (audited) when not theirs."""
    request = store.get_request(request_id)
    if not can_see(request, user):
        store.record(
            "request.view_refused",
            actor=user.name,
            channel=channel,
            request_id=request_id,
            data={"reason": "not an approver"},
        )
        raise NotAnApprover(f"{user.name} is not an approver of request {request_id}")
    return request


def managed_request(store: Store, request_id: str, user: User, *, what: str, channel: str = "api") -> Request:
    request = visible_request(store, request_id, user, channel=channel)
    if not can_manage(request, user):
        store.record(
            "request.change_refused",
            actor=user.name,
            channel=channel,
            request_id=request_id,
            data={"reason": f"only the agent that asked may {what}"},
        )
        raise PermissionDenied(f"only the agent that asked (or an admin) may {what} request {request_id}")
    return request


def request_view(request: Request, user: User) -> dict[str, object]:
    """The JSON a caller gets: redacted for people; the asking agent also gets the full record."""
    view = request.to_dict()
    if is_creator(request, user):
        view["record"] = request.to_record()
    return view


def require_admin(user: User) -> None:
    if not user.is_admin:
        raise PermissionDenied(f"{user.name} is not an admin")


class Caller:
    """The authenticated user of one HTTP request, and how they authenticated."""

    def __init__(self, user: User, *, session: str | None = None, csrf: str | None = None) -> None:
        self.user = user
        self.session = session
        self.csrf = csrf

    @property
    def channel(self) -> str:
        return "web" if self.session is not None else "api"


def _identify(store: Store, authorization: str | None, session: str | None) -> Caller:
    if authorization:
        scheme, _, secret = authorization.partition(" ")
        secret = secret.strip()
        if scheme.lower() != "bearer" or not secret:
            raise NotAuthenticated("use 'Authorization: Bearer <token>'")
        user = store.authenticate(secret) if kind_of(secret) == "token" else None
        if user is None:
            raise NotAuthenticated("the API token is invalid, expired or revoked")
        return Caller(replace(user, groups=tuple(store.groups_of(user.name))))
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
    in the `X-CSRF-Token` header or a `csrf_token` form field)."""
    server: Server = server_of(request)
    caller = await identify(server, request.headers.get("authorization"), request.cookies.get(SESSION_COOKIE))
    if caller.session is not None and request.method not in SAFE_METHODS:
        sent = request.headers.get(CSRF_HEADER)
        if sent is None and request.headers.get("content-type", "").startswith(
            ("application/x-www-form-urlencoded", "multipart/form-data")
        ):
            form = await request.form()
            value = form.get(CSRF_FIELD)
            sent = value if isinstance(value, str) else None
        if sent != caller.csrf:
            raise PermissionDenied("missing or wrong CSRF token; reload the page and try again")
    request.state.caller = caller
    return caller


async def current_user(caller: Annotated[Caller, Depends(authenticate)]) -> User:
    return caller.user


CurrentCaller = Annotated[Caller, Depends(authenticate)]
CurrentUser = Annotated[User, Depends(current_user)]
