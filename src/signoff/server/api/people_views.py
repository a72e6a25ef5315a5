"""Bodies and answers of the people, groups, agents and tokens administration API, as
`/openapi.json` documents them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from .models import Body
from .request_views import Moment
from .views import NewToken, TokenView, UserView

EXPIRES_IN_DOC = (
    "A duration (e.g. 30d, or seconds); the server's default lifetime if not given "
    "(`signoff serve --token-ttl`), never past its maximum (`--token-max-ttl`)."
)


class UserPatchBody(Body):
    """What to change (what is left out stays as it is)."""

    role: Literal["admin", "member", "agent"] | None = None
    disabled: bool | None = Field(
        default=None, description="A disabled user's tokens and sessions stop working."
    )
    display_name: str | None = Field(default=None, max_length=200)
    email: str | None = Field(default=None, max_length=320)


class AgentBody(Body):
    name: str = Field(min_length=1, max_length=128, description="The agent's user name.")
    display_name: str | None = Field(default=None, max_length=200)
    label: str | None = Field(default=None, max_length=200, description="What its first token is for.")
    expires_in: str | float | None = Field(default=None, description=EXPIRES_IN_DOC)


class SignInView(BaseModel):
    method: str = Field(description="How: link (a login link), oidc, ...")
    at: Moment


class AddressView(BaseModel):
    kind: str
    address: str
    verified: bool


class PersonRowView(UserView):
    sign_in: SignInView | None = Field(description="Their last sign-in.")
    last_seen: Moment | None = Field(description="Their newest sign-in or token or session use.")
    addresses: list[AddressView]


class StatedTokenView(TokenView):
    state: Literal["active", "expired", "revoked"]


class AskedView(BaseModel):
    id: str
    tool: str
    status: str
    created_at: Moment
    decided_by: str | None
    decided_at: Moment | None


class DecidedView(BaseModel):
    request_id: str | None
    type: str | None
    at: Moment


class IdentityView(BaseModel):
    issuer: str = Field(description="The OpenID provider (`iss`).")
    subject: str = Field(description="Who they are there (`sub`).")
    signed_in_at: Moment


class PersonView(PersonRowView):
    tokens: list[StatedTokenView]
    identities: list[IdentityView] = Field(description="The identity provider's accounts that sign them in.")
    requests: list[AskedView] = Field(description="What they asked (agents), newest first.")
    waiting: list[AskedView] = Field(description="Pending requests in their inbox (people), newest first.")
    decisions: list[DecidedView] = Field(description="What they decided, newest first.")


class NewAgentView(BaseModel):
    agent: UserView
    token: NewToken
