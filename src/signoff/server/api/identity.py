"""`/v1/me`, `/v1/users`, `/v1/tokens`, `/v1/groups`: who is who (admins manage; anyone reads
themselves and makes tokens for themselves)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter
from fastapi import Request as HttpRequest

from ... import people_admin
from ..access import CurrentCaller, CurrentUser, require_admin
from ..context import server_of
from ..errors import API_ERRORS
from .models import GroupMemberBody, TokenBody, UserBody
from .people_views import PersonRowView
from .shown import ShownAs
from .views import GroupMember, NewToken, Removed, Revoked, TokenView, UserView

router = APIRouter(prefix="/v1", tags=["identity"], responses=API_ERRORS)
UserJSON = Annotated[dict[str, Any], ShownAs(UserView)]


@router.get("/me", summary="Who you are")
def me(user: CurrentUser) -> UserJSON:
    return user.to_dict()


@router.get("/users", summary="Every user, with sign-in, last seen and addresses (admins)")
def users(
    http: HttpRequest, user: CurrentUser
) -> Annotated[list[dict[str, Any]], ShownAs(list[PersonRowView])]:
    require_admin(user)
    return people_admin.people_views(server_of(http).store)


@router.post("/users", status_code=201, summary="Add a user (admins)")
def add_user(body: UserBody, http: HttpRequest, caller: CurrentCaller) -> UserJSON:
    require_admin(caller.user)
    added = people_admin.add_person(
        server_of(http).store,
        body.name,
        role=body.role,
        display_name=body.display_name,
        email=body.email,
        actor=caller.user.name,
        via=caller.channel,
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


@router.delete("/tokens/{token_id}", summary="Revoke a token (409 if it already is)")
def revoke_token(
    token_id: str, http: HttpRequest, caller: CurrentCaller
) -> Annotated[dict[str, Any], ShownAs(Revoked)]:
    server = server_of(http)
    if people_admin.known_token(server.store, token_id).user_name != caller.user.name:
        require_admin(caller.user)
    people_admin.revoke_token(server.store, token_id, actor=caller.user.name, via=caller.channel)
    server.callers.clear()
    return {"revoked": True}


@router.get("/groups", summary="Groups and their members")
def groups(http: HttpRequest, user: CurrentUser) -> dict[str, list[str]]:
    require_admin(user)
    return server_of(http).store.group_members()


@router.post(
    "/groups/{group}/members", status_code=201, summary="Add a member (admins; 409 if they already are)"
)
def add_member(
    group: str, body: GroupMemberBody, http: HttpRequest, caller: CurrentCaller
) -> Annotated[dict[str, Any], ShownAs(GroupMember)]:
    require_admin(caller.user)
    store = server_of(http).store
    people_admin.add_member(store, group, body.user, actor=caller.user.name, via=caller.channel)
    return {"group": people_admin.group_name(group), "user": body.user}


@router.delete(
    "/groups/{group}/members/{member}", summary="Remove a member (admins; 409 if they are not one)"
)
def remove_member(
    group: str, member: str, http: HttpRequest, caller: CurrentCaller
) -> Annotated[dict[str, Any], ShownAs(Removed)]:
    require_admin(caller.user)
    store = server_of(http).store
    people_admin.remove_member(store, group, member, actor=caller.user.name, via=caller.channel)
    return {"removed": True}
