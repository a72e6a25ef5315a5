"""`/v1/me`, `/v1/users`, `/v1/tokens`, `/v1/groups`: who is who (admins manage; anyone reads
themselves and makes tokens for themselves)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter
from fastapi import Request as HttpRequest

from ...errors import NotFound
from ..access import CurrentCaller, CurrentUser, require_admin
from ..context import server_of
from ..errors import API_ERRORS
from .models import GroupMemberBody, TokenBody, UserBody
from .shown import ShownAs
from .views import GroupMember, NewToken, Removed, Revoked, TokenView, UserView

router = APIRouter(prefix="/v1", tags=["identity"], responses=API_ERRORS)
UserJSON = Annotated[dict[str, Any], ShownAs(UserView)]


@router.get("/me", summary="Who you are")
def me(user: CurrentUser) -> UserJSON:
    return user.to_dict()


@router.get("/users", summary="Every user (admins)")
def users(http: HttpRequest, user: CurrentUser) -> Annotated[list[dict[str, Any]], ShownAs(list[UserView])]:
    require_admin(user)
    return [found.to_dict() for found in server_of(http).store.list_users()]


@router.post("/users", status_code=201, summary="Add a user (admins)")
def add_user(body: UserBody, http: HttpRequest, caller: CurrentCaller) -> UserJSON:
    require_admin(caller.user)
    added = server_of(http).store.add_user(
        body.name,
        role=body.role,
        display_name=body.display_name,
        email=body.email,
        actor=caller.user.name,
        channel=caller.channel,
    )
    return added.to_dict()


@router.post("/tokens", status_code=201, summary="Create an API token (shown once)")
def create_token(
    body: TokenBody, http: HttpRequest, caller: CurrentCaller
) -> Annotated[dict[str, Any], ShownAs(NewToken)]:
    owner = body.user or caller.user.name
    if owner != caller.user.name:
        require_admin(caller.user)
    server = server_of(http)
    ttl = server.settings.tokens.lifetime(body.expires_in)
    secret, credential = server.store.issue_credential(
        "token", owner, ttl=ttl, label=body.label, actor=caller.user.name, channel=caller.channel
    )
    return {"token": secret, **credential.to_dict()}


@router.get("/tokens", summary="Your tokens (admins: everyone's), without their secrets")
def list_tokens(
    http: HttpRequest, user: CurrentUser
) -> Annotated[list[dict[str, Any]], ShownAs(list[TokenView])]:
    owner = None if user.is_admin else user.name
    return [credential.to_dict() for credential in server_of(http).store.list_credentials("token", owner)]


@router.delete("/tokens/{token_id}", summary="Revoke a token")
def revoke_token(
    token_id: str, http: HttpRequest, caller: CurrentCaller
) -> Annotated[dict[str, Any], ShownAs(Revoked)]:
    store = server_of(http).store
    credential = store.get_credential(token_id)
    if credential is None or credential.kind != "token":
        raise NotFound(f"no token {token_id!r}")
    if credential.user_name != caller.user.name:
        require_admin(caller.user)
    revoked = store.revoke_credential(id=token_id, actor=caller.user.name, channel=caller.channel)
    server_of(http).callers.clear()
    return {"revoked": revoked}


@router.get("/groups", summary="Groups and their members")
def groups(http: HttpRequest, user: CurrentUser) -> dict[str, list[str]]:
    require_admin(user)
    return server_of(http).store.group_members()


@router.post("/groups/{group}/members", status_code=201, summary="Add a member (admins)")
def add_member(
    group: str, body: GroupMemberBody, http: HttpRequest, caller: CurrentCaller
) -> Annotated[dict[str, Any], ShownAs(GroupMember)]:
    require_admin(caller.user)
    server_of(http).store.add_group_member(group, body.user, actor=caller.user.name, channel=caller.channel)
    return {"group": group, "user": body.user}


@router.delete("/groups/{group}/members/{member}", summary="Remove a member (admins)")
def remove_member(
    group: str, member: str, http: HttpRequest, caller: CurrentCaller
) -> Annotated[dict[str, Any], ShownAs(Removed)]:
    require_admin(caller.user)
    removed = server_of(http).store.remove_group_member(
        group, member, actor=caller.user.name, channel=caller.channel
    )
    return {"removed": removed}
