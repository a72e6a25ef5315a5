"""`/v1/grants`: the standing grants (`signoff.grants`), listed and revoked. A grant is given
with an approval (`POST /v1/requests/{id}/decision` with a `grant` field)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi import Request as HttpRequest

from ..._util import utcnow
from ...errors import NotFound, PermissionDenied
from ...identity import User, not_a_person
from ..access import CurrentCaller, CurrentUser
from ..context import server_of
from ..errors import API_ERRORS
from .grant_views import GrantJSON, GrantListJSON

router = APIRouter(prefix="/v1/grants", tags=["grants"], responses=API_ERRORS)


def _person(user: User) -> None:
    refused = not_a_person(user.name, user)
    if refused is not None:
        raise PermissionDenied(f"{refused}: grants are for people to see and revoke")


@router.get("", summary="List standing grants (in force; `all`: expired and revoked too)")
def list_grants(http: HttpRequest, user: CurrentUser, all: bool = False) -> GrantListJSON:
    """A person sees the grants they gave; an admin sees everyone's."""
    _person(user)
    now = utcnow()
    mine = None if user.is_admin else user.name
    grants = server_of(http).store.list_grants(include_ended=all, granted_by=mine)
    return {"grants": [grant.to_dict(now) for grant in grants]}


@router.get("/{grant_id}", summary="One standing grant (its author's or an admin's to see)")
def get_grant(grant_id: str, http: HttpRequest, user: CurrentUser) -> GrantJSON:
    _person(user)
    grant = server_of(http).store.get_grant(grant_id)
    if grant.granted_by != user.name and not user.is_admin:
        raise NotFound(f"no grant with id {grant_id!r}")
    return grant.to_dict(utcnow())


@router.delete("/{grant_id}", summary="Revoke a standing grant now (its author or an admin)")
def revoke_grant(grant_id: str, http: HttpRequest, caller: CurrentCaller) -> GrantJSON:
    _person(caller.user)
    store = server_of(http).store
    grant = store.revoke_grant(
        grant_id, actor=caller.user.name, channel=caller.channel, admin=caller.user.is_admin
    )
    return grant.to_dict(utcnow())
