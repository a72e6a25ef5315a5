"""`/v1/rules/shadow`: rules tried in shadow (see `signoff.shadow`), for admins: list, add, one
with its hits, promote, drop; and `POST /v1/rules/shadow/hits`, where a gate running elsewhere
(a `Client`'s) sends the hits it saw. The active shadows reach those gates with the rules
(`GET /v1/rules` answers them as `shadows`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query
from fastapi import Request as HttpRequest
from pydantic import Field

from ..._util import utcnow
from ...errors import PermissionDenied
from ...rules.model import RuleSet
from ...shadow import ShadowHit
from ..access import CurrentCaller, CurrentUser, require_admin
from ..context import server_of
from ..errors import API_ERRORS
from ..limits import MAX_INTEGER
from .models import Body
from .shadow_views import (
    PromotedJSON,
    RecordedJSON,
    ReplayJSON,
    ShadowJSON,
    ShadowList,
    ShadowShownJSON,
)

router = APIRouter(prefix="/v1/rules/shadow", tags=["rules"], responses=API_ERRORS)
ShadowId = Annotated[int, Path(ge=1, le=MAX_INTEGER, description="The shadow's number.")]
MAX_HITS = 500
"""Hits one `POST /v1/rules/shadow/hits` may carry."""


class NewShadowBody(Body):
    label: str = Field(min_length=1, max_length=200, description="What it tries.")
    rules: dict[str, Any] = Field(description="The proposed rules, as `PUT /v1/rules` takes them.")


class ReplayBody(Body):
    rules: dict[str, Any] = Field(description="The proposed rules, as `PUT /v1/rules` takes them.")
    days: float = Field(default=7.0, gt=0, le=366, description="How far back to replay.")


class HitBody(Body):
    shadow_id: int = Field(ge=1, le=MAX_INTEGER)
    direction: Literal["newly_asked", "no_longer_asked"]
    tool: str = Field(min_length=1, max_length=512)
    agent: str | None = Field(default=None, max_length=512)
    app: str | None = Field(default=None, max_length=512)
    requester: str | None = Field(default=None, max_length=512)
    args: dict[str, Any] = Field(default_factory=dict)
    rule: dict[str, Any] = Field(default_factory=dict)
    id: int | None = Field(default=None, description="Ignored: the server numbers hits.")
    at: str | None = Field(default=None, description="Ignored: a hit is recorded at the server's time.")


class HitsBody(Body):
    hits: list[HitBody] = Field(max_length=MAX_HITS)


@router.get("", summary="The rules tried in shadow, with their hits counted (admins)")
def list_shadows(
    http: HttpRequest,
    user: CurrentUser,
    everything: Annotated[bool, Query(alias="all", description="Promoted and dropped ones too.")] = False,
) -> ShadowList:
    require_admin(user)
    return [shadow.to_dict() for shadow in server_of(http).store.shadow_rules(everything=everything)]


@router.post("", summary="Try rules in shadow beside the rules in force (admins)", status_code=201)
def add_shadow(http: HttpRequest, caller: CurrentCaller, body: NewShadowBody) -> ShadowJSON:
    """Audited as `rules.shadow_added`. Nothing changes for agents: calls these rules would
    answer differently are recorded as hits."""
    require_admin(caller.user)
    proposed = RuleSet.from_dict(body.rules)
    store = server_of(http).store
    shadow = store.add_shadow_rules(
        proposed, label=body.label, actor=caller.user.name, channel=caller.channel
    )
    return shadow.to_dict()


@router.post("/preview", summary="Recorded calls replayed through proposed rules (admins)")
def preview(http: HttpRequest, user: CurrentUser, body: ReplayBody) -> ReplayJSON:
    """The calls recorded in the last `days` days (requests, and shadow hits of calls that ran
    unasked) answered under the rules in force and under `rules`: how many would be newly asked,
    no longer asked, asked of other approvers or with another deadline, with examples. Nothing
    is stored."""
    require_admin(user)
    proposed = RuleSet.from_dict(body.rules)
    proposed.refuse_callables()
    return server_of(http).store.replay_rules(proposed, days=body.days).to_dict()


@router.post("/hits", summary="Record the hits a gate saw (agents)")
def record_hits(http: HttpRequest, caller: CurrentCaller, body: HitsBody) -> RecordedJSON:
    """Hits of shadows no longer active are ignored; `recorded` counts those kept."""
    if caller.user.role == "member":
        raise PermissionDenied(f"{caller.user.name} is a person; shadow hits are sent by agents' gates")
    now = utcnow()
    hits = [ShadowHit(**hit.model_dump(exclude={"id", "at"}), at=now) for hit in body.hits]
    return {"recorded": server_of(http).store.record_shadow_hits(hits)}


@router.get("/{shadow_id}", summary="One shadow, its hits counted per rule, and its latest hits (admins)")
def show_shadow(
    shadow_id: ShadowId,
    http: HttpRequest,
    user: CurrentUser,
    before: Annotated[int, Query(ge=0, le=MAX_INTEGER, description="Hits before this one (0: newest).")] = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> ShadowShownJSON:
    require_admin(user)
    store = server_of(http).store
    shadow = store.get_shadow_rules(shadow_id)
    hits = store.shadow_hits(shadow_id, before=before, limit=limit)
    by_rule = [item.to_dict() for item in store.shadow_hits_by_rule(shadow_id)]
    return {**shadow.to_dict(), "by_rule": by_rule, "hits": [hit.to_dict() for hit in hits]}


@router.post("/{shadow_id}/promote", summary="Make the shadow's rules the rules in force (admins)")
def promote_shadow(shadow_id: ShadowId, http: HttpRequest, caller: CurrentCaller) -> PromotedJSON:
    """Audited as `rules.promoted` (a change in the rules' history); 409 `RulesChanged` if the
    rules in force changed since the shadow was added, 409 if it is no longer active."""
    require_admin(caller.user)
    store = server_of(http).store
    version = store.promote_shadow_rules(shadow_id, actor=caller.user.name, channel=caller.channel)
    return {"version": version}


@router.post("/{shadow_id}/drop", summary="Stop trying the shadow (admins)")
def drop_shadow(shadow_id: ShadowId, http: HttpRequest, caller: CurrentCaller) -> ShadowJSON:
    """Audited as `rules.shadow_dropped`; its hits stay until purged."""
    require_admin(caller.user)
    store = server_of(http).store
    return store.drop_shadow_rules(shadow_id, actor=caller.user.name, channel=caller.channel).to_dict()
