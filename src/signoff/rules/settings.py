"""What a rule entry may say beyond on/off (`RuleSettings`), and the pieces every layer entry's model
shares: strict frozen models, durations written as text, channel names."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Annotated, Any

import pydantic
from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, field_validator

from .._util import format_duration, parse_duration
from ..decisions import DECISION_TYPES, DecisionType
from ..errors import ConfigError
from .callables import DescribeFn, WhenFn
from .conditions import compile_condition
from .effective import OnExpire, SeparationSetting, UnattendedMode
from .schedule_model import EscalationEntry, StepTime, check_escalate, check_remind

__all__ = ["CHANNEL_NAME", "Duration", "RuleSettings", "StrictModel"]

CHANNEL_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")
"""A channel's name in a rule (the same shape `signoff.channels.registry` requires)."""

Duration = Annotated[
    timedelta,
    pydantic.BeforeValidator(parse_duration),
    PlainSerializer(format_duration, return_type=str),
]


class StrictModel(BaseModel):
    """Unknown fields are refused; an entry, once built, does not change."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class RuleSettings(StrictModel):
    """What a rule entry may say beyond on/off. Unset fields come from the layer beneath.

    In code, `when` and `description` may be Python callables (`signoff.rules.callables`); such a
    rule set cannot be stored, written to a file or sent to a server."""

    allowed_decisions: list[DecisionType] | None = None
    description: str | DescribeFn | None = None
    when: str | WhenFn | None = None
    approvers: list[str] | None = None
    """Who may decide: user names, `group:NAME`, or `requester` (the user the agent acts for)."""
    channels: list[str] | None = None
    """Where the approvers are told: `inbox` (the web inbox, the default) and the names of
    channels the server is configured with (`signoff serve --channels`)."""
    deadline: Duration | None = None
    on_expire: OnExpire | None = None
    expire_message: str | None = None
    quorum: int | None = Field(default=None, ge=1)
    redact: list[str] | None = None
    reject_template: str | None = None
    modify_template: str | None = None
    feedback_template: str | None = None
    unattended: UnattendedMode | None = None
    confirm: bool | None = None
    """The call is destructive: approving it from the keyboard in the inbox asks once more (a
    tool's MCP `destructiveHint: true` does the same)."""
    separation: SeparationSetting | None = None
    """Four eyes: `requester` keeps the person the agent acts for from approving its request;
    `requester_and_creator` also the owner of the agent's token; `none` turns off what a layer
    beneath said."""
    batch: bool | None = None
    """`false`: its requests are decided one at a time, never in a batch (`decide_many`, the
    inbox's selection, `signoff approve --all`); a batch skips them and says why."""
    max_grant: Duration | None = None
    """The longest standing grant ("approve calls like this for N minutes") an approver may give
    deciding such a call; unset: none (`signoff.grants`). Never with a quorum over 1."""
    remind: Annotated[list[StepTime] | None, pydantic.AfterValidator(check_remind)] = None
    escalate: Annotated[list[EscalationEntry] | None, pydantic.AfterValidator(check_escalate)] = None
    """Reminders and escalations while the request waits (`schedule_model`)."""

    @field_validator("allowed_decisions")
    @classmethod
    def _canonical_order(cls, value: list[DecisionType] | None) -> list[DecisionType] | None:
        """In the canonical order, each once. As written otherwise: a rule layer's list gets
        approve when it is resolved (seed 004), a component's own declaration keeps its list."""
        if value is None:
            return None
        return [kind for kind in DECISION_TYPES if kind in value]

    @field_validator("channels")
    @classmethod
    def _channel_names(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("name at least one channel (inbox is the web inbox)")
        for name in value:
            if not CHANNEL_NAME.match(name):
                raise ValueError(
                    f"channel {name!r}: a channel's name is lower-case letters, digits, '-' and '_', "
                    "starting with a letter"
                )
        if len(set(value)) != len(value):
            raise ValueError(f"a channel is named twice: {value!r}")
        return value

    @field_validator("approvers")
    @classmethod
    def _approver_names(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and any(not name or not name.strip() for name in value):
            raise ValueError("an approver cannot be empty")
        return value

    @field_validator("when")
    @classmethod
    def _compiles(cls, value: str | WhenFn | None) -> str | WhenFn | None:
        if isinstance(value, str):
            try:
                compile_condition(value)
            except ConfigError as exc:
                # as a ValueError, so that the message says which entry holds the condition
                raise ValueError(exc.message) from None
        return value

    def fields_set(self) -> dict[str, Any]:
        return {
            name: getattr(self, name) for name in self.model_fields_set if getattr(self, name) is not None
        }
