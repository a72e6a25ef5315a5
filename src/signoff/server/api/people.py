"""Administering people, agents and tokens through the API (admins only): a person with their
sign-in, addresses, tokens, requests and decisions; a change of role, disabled flag, display
name or email; an agent made with its first token. Each is `signoff.people_admin`'s one
implementation, audited once with before and after. (Listing users and groups, adding a user,
group members and tokens are in `identity`.)"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter
from fastapi import Request as HttpRequest

from ... import people_admin
from ..access import CurrentCaller, CurrentUser, require_admin
from ..context import server_of
from ..errors import API_ERRORS
from .people_views import AgentBody, NewAgentView, PersonRowView, PersonView, UserPatchBody
from .shown import ShownAs
from .views import UserView

router = APIRouter(prefix="/v1", tags=["identity"], responses=API_ERRORS)


@router.get("/users/{name}", summary="One user: sign-in, addresses, tokens, requests, decisions (admins)")
def person(name: str, http: HttpRequest, user: CurrentUser) -> Annotated[dict[str, Any], ShownAs(PersonView)]:
    require_admin(user)
    return people_admin.person_view(server_of(http).store, name)


@router.patch(
    "/users/{name}",
    summary="Change a user's role, disabled flag, display name or email (admins)",
    description=(
        "Audited once as `user.updated` with the user before and after. 404 for no such user; 409 "
        "(nothing changed) when nothing given differs, or when it would leave no enabled admin."
    ),
)
def change(
    name: str, body: UserPatchBody, http: HttpRequest, caller: CurrentCaller
) -> Annotated[dict[str, Any], ShownAs(UserView)]:
    require_admin(caller.user)
    server = server_of(http)
    changed = people_admin.change_person(
        server.store,
        name,
        role=body.role,
        disabled=body.disabled,
        display_name=body.display_name,
        email=body.email,
        actor=caller.user.name,
        via=caller.channel,
    )
    server.callers.clear()
    return changed.to_dict()


@router.get("/agents", summary="Every agent, with its last use (admins)")
def agents(
    http: HttpRequest, user: CurrentUser
) -> Annotated[list[dict[str, Any]], ShownAs(list[PersonRowView])]:
    require_admin(user)
    return people_admin.people_views(server_of(http).store, role="agent")


@router.post(
    "/agents",
    status_code=201,
    summary="Make an agent and its first API token (admins; the secret is shown once)",
    description="Audited once as `agent.created`. The token expires as `POST /v1/tokens` says.",
)
def create_agent(
    body: AgentBody, http: HttpRequest, caller: CurrentCaller
) -> Annotated[dict[str, Any], ShownAs(NewAgentView)]:
    require_admin(caller.user)
    server = server_of(http)
    agent, secret, token = people_admin.create_agent(
        server.store,
        body.name,
        ttl=server.settings.tokens.lifetime(body.expires_in),
        display_name=body.display_name,
        label=body.label,
        actor=caller.user.name,
        via=caller.channel,
    )
    return {"agent": agent.to_dict(), "token": {"token": secret, **token}}
