"""Bodies and answers of the channels API (addresses, webhooks, the outbox), as
`/openapi.json` documents them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from .models import Body
from .request_views import Moment


class AddressBody(Body):
    address: str = Field(min_length=1, max_length=320, description="The person's id or address there.")


class CodeBody(Body):
    code: str = Field(min_length=1, max_length=32, description="The code sent to the address.")


class AddressesView(BaseModel):
    user: str
    addresses: dict[str, str] = Field(
        description="Kind (slack, wecom, feishu, email, text:<platform>) → address."
    )
    verified: dict[str, bool] = Field(
        description="Kind → whether that address counts: requests go there, and its callbacks "
        "decide, only once it is verified (a code sent there and entered, or set by an admin)."
    )


class AddressView(BaseModel):
    user: str
    kind: str
    address: str
    verified: bool = Field(description="Whether it counts (requests go there, its callbacks decide).")
    code_via: str | None = Field(
        default=None,
        description="The channel a verification code was just queued on; the person enters it "
        "with POST /v1/users/{name}/addresses/{kind}/verify.",
    )
    code_expires_at: Moment | None = Field(
        default=None, description="When the code sent there stops working (null: none is waiting)."
    )


class WebhookBody(Body):
    url: str = Field(min_length=1, max_length=2048)
    events: list[str] = Field(default_factory=list, description="The events to send; none: all of them.")
    inbound_as: str | None = Field(
        default=None, description="Take signed decisions from it, made as this person."
    )
    description: str | None = Field(default=None, max_length=500)


class RotateBody(Body):
    keep_old: bool = Field(default=True, description="Keep signing with the previous secret(s) too.")


class WebhookView(BaseModel):
    id: str
    url: str
    events: list[str]
    inbound: bool
    actor: str | None
    description: str | None
    secrets: int = Field(description="How many secrets sign (more than one during a rotation).")
    created_at: Moment
    disabled: bool


class NewWebhook(WebhookView):
    secret: str = Field(description="The signing secret (whsec_…): shown this once, never again.")


class NewSecret(BaseModel):
    id: str
    secret: str = Field(description="The new signing secret: shown this once.")


class InboundDecisionBody(Body):
    """A signed decision from a webhook's receiver (Standard Webhooks headers)."""

    request_id: str = Field(min_length=1, max_length=64)
    decision: dict[str, Any] = Field(description="As for POST /v1/requests/{id}/decision.")
