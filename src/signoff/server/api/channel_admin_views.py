"""Bodies and answers of the channel and webhook administration API, as `/openapi.json`
documents them. Secrets go in (`secrets`), never out: an answer says which are "set"."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from .models import Body
from .request_views import Moment, OutboxRowView

SettingValue = str | int | float
SECRETS_DOC = (
    "The kind's secrets (tokens, app secrets, passwords), sealed with the server's secrets key "
    "before they are stored and never shown again: answers say only which are set."
)


class NewChannelBody(Body):
    name: str = Field(min_length=1, max_length=63, description="Lower-case letters, digits, '-' and '_'.")
    kind: str = Field(
        min_length=1, max_length=32, description="slack, wecom, feishu, email, text or recording."
    )
    locale: Literal["en", "zh"] = "en"
    timeout: float = Field(default=10.0, gt=0, le=600, description="Seconds one send may take.")
    concurrency: int = Field(default=8, ge=1, le=1000, description="Sends under way at once.")
    settings: dict[str, SettingValue] = Field(
        default_factory=dict, description="The kind's plain settings (see the README's Channels)."
    )
    secrets: dict[str, str] = Field(default_factory=dict, description=SECRETS_DOC)


class ChannelEditBody(Body):
    version: int | None = Field(
        default=None, ge=1, description="The version read: refused (409) if it changed since."
    )
    locale: Literal["en", "zh"] | None = None
    timeout: float | None = Field(default=None, gt=0, le=600)
    concurrency: int | None = Field(default=None, ge=1, le=1000)
    settings: dict[str, SettingValue | None] = Field(
        default_factory=dict, description="Settings to change; null removes one. Others stay."
    )
    secrets: dict[str, str | None] = Field(
        default_factory=dict,
        description="Secrets to replace; null removes one. Those not named stay as they are. " + SECRETS_DOC,
    )


class ChannelTestBody(Body):
    to: str | None = Field(default=None, max_length=64, description="A user: sent to their verified address.")
    target: str | None = Field(default=None, max_length=320, description="Or the platform's address itself.")


class WebhookEditBody(Body):
    url: str | None = Field(default=None, min_length=1, max_length=2048)
    events: list[str] | None = Field(default=None, description="The events to send (all: every one).")
    inbound_as: str | None = Field(
        default=None, max_length=64, description='Take signed decisions, made as this person; "": none.'
    )
    description: str | None = Field(default=None, max_length=500, description='"": none.')


class ChannelView(BaseModel):
    """A channel: from the server's channels file (read-only here) or kept in the store."""

    name: str
    kind: str
    locale: Literal["en", "zh"]
    timeout: float
    concurrency: int
    settings: dict[str, Any] = Field(description="Plain settings (credentials in URLs shown as ***).")
    secrets: dict[str, Literal["set"]] = Field(description="Which secrets are set; never their values.")
    disabled: bool
    version: int | None = Field(description="Grows with each change (null: from the channels file).")
    created_at: Moment | None
    created_by: str | None
    updated_at: Moment | None
    updated_by: str | None
    source: Literal["file", "store"] = Field(description="file: the channels file's, read-only here.")
    state: Literal["ready", "disabled", "unusable"] = Field(description="Whether this server uses it.")
    problem: str | None = Field(description="Why it is unusable here (a secret the key does not open…).")


class TrialView(BaseModel):
    """What came of a test message: sent (the platform's reference) or why not."""

    ok: bool
    channel: str = Field(description="The channel's name (a webhook's id).")
    kind: str = Field(description="The channel's kind (webhook: a webhook).")
    target: str
    ref: dict[str, Any] | None
    error: str | None
    seconds: float


class DeliveriesView(BaseModel):
    recent: list[OutboxRowView] = Field(description="Its latest messages, newest first.")
    dead: list[OutboxRowView] = Field(
        description="Its dead letters, newest first (POST /v1/outbox/{id}/retry)."
    )
