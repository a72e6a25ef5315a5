"""What the shadow rules' endpoints answer (documented in `/openapi.json`; sent as the dicts
`signoff.shadow` and `signoff.rules.replay` make)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from .request_views import Moment
from .shown import ShownAs

Direction = Literal["newly_asked", "no_longer_asked"]


class ShadowView(BaseModel):
    id: int
    label: str | None = Field(description="What the admin called the change.")
    rules: dict[str, Any] = Field(description="The rules tried (every layer, as `PUT /v1/rules` takes them).")
    base: dict[str, Any] = Field(description="The rules in force when the shadow was added.")
    status: Literal["active", "promoted", "dropped"]
    created_by: str
    created_at: Moment
    closed_by: str | None = Field(description="Who promoted or dropped it.")
    updated_at: Moment | None
    newly_asked: int = Field(description="Calls that ran unasked and the shadow would have asked about.")
    no_longer_asked: int = Field(description="Calls that were asked and the shadow would have let run.")


class ShadowHitView(BaseModel):
    id: int | None
    shadow_id: int
    direction: Direction
    tool: str
    agent: str | None
    app: str | None
    requester: str | None
    args: dict[str, Any] = Field(description="The call's args, the rule's `redact` names masked.")
    rule: dict[str, Any] = Field(
        description="The shadow's deciding `layer` and `key` beside those of the rules in force "
        "(`live_layer`, `live_key`)."
    )
    at: Moment


class RuleHitsView(BaseModel):
    direction: Direction
    layer: str | None
    key: str | None
    hits: int


class ShadowShownView(ShadowView):
    by_rule: list[RuleHitsView] = Field(description="Its hits counted per deciding rule.")
    hits: list[ShadowHitView] = Field(description="Its latest hits, newest first.")


class ReplayedCallView(BaseModel):
    tool: str
    agent: str | None
    app: str | None
    requester: str | None
    args: dict[str, Any]
    at: Moment
    source: Literal["request", "shadow_hit"] = Field(description="Where the call was recorded.")
    change: Literal["newly_asked", "no_longer_asked", "other_approvers", "other_deadline", "unchanged"]
    in_force: str = Field(description="What the rules in force said, in words.")
    proposed: str = Field(description="What the proposed rules say, in words.")


class ReplayView(BaseModel):
    since: Moment
    calls: int = Field(description="Recorded calls replayed.")
    changed: int = Field(description="Of those, the ones the proposed rules answer otherwise.")
    counts: dict[str, int] = Field(description="Changed calls per kind of change.")
    unreadable: int = Field(description="Recorded calls that could not be replayed.")
    examples: dict[str, list[ReplayedCallView]] = Field(description="A few changed calls per kind.")


class RecordedView(BaseModel):
    recorded: int = Field(description="Hits stored (a hit of a shadow closed meanwhile is not).")


class PromotedView(BaseModel):
    version: int = Field(description="The rules' version with the shadow's rules in force.")


ShadowList = Annotated[list[dict[str, Any]], ShownAs(list[ShadowView])]
ShadowJSON = Annotated[dict[str, Any], ShownAs(ShadowView)]
ShadowShownJSON = Annotated[dict[str, Any], ShownAs(ShadowShownView)]
ReplayJSON = Annotated[dict[str, Any], ShownAs(ReplayView)]
RecordedJSON = Annotated[dict[str, int], ShownAs(RecordedView)]
PromotedJSON = Annotated[dict[str, int], ShownAs(PromotedView)]
