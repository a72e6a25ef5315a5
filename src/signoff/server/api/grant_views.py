"""What the standing grants' endpoints answer (documented in `/openapi.json`; sent as the dicts
`signoff.grants.Grant.to_dict` makes)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from .request_views import Moment
from .shown import ShownAs


class GrantView(BaseModel):
    id: str
    tool: str
    scope: Literal["agent", "app", "thread"]
    agent: str | None
    app: str | None
    thread_id: str | None
    creator: str = Field(description="The agent's token user the grant covers calls of.")
    when: str | None = Field(description="The CEL condition over args it covers; null: the same args.")
    args_digest: str | None = Field(description="The digest of the args it covers (the same args).")
    granted_by: str
    request_id: str = Field(description="The request whose approval gave it.")
    created_at: Moment
    expires_at: Moment
    revoked_at: Moment | None
    revoked_by: str | None
    status: Literal["active", "expired", "revoked"]


class GrantListView(BaseModel):
    grants: list[GrantView]


GrantJSON = Annotated[dict[str, Any], ShownAs(GrantView)]
GrantListJSON = Annotated[dict[str, Any], ShownAs(GrantListView)]
