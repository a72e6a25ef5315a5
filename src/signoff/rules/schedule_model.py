"""What a rule says about nudging people while a request waits (DESIGN §14): `remind` re-notifies
the approvers at the times it lists, and `escalate` adds approvers after a delay.

    remind:   [30m, 2h]          # or fractions of the deadline: [50%, 90%]
    escalate: [{after: 4h, to: [group:oncall]}, {after: 12h, to: [user:cto]}]

A time is a duration after the request was made (`30m`, `2h`, `1d`) or a fraction of its
deadline (`50%`: halfway from when it was made to its deadline). Steps that would fall at or after
the deadline are never planned (the deadline and `on_expire` apply as they always do). Escalation
names people (`alice`, or `user:alice`) and groups (`group:oncall`), as `approvers` does; the
requester is not named here (a request for no one would escalate to nobody).

This module holds the rule files' pydantic models of them; the plain part is `schedule`.
"""

from __future__ import annotations

from typing import Annotated, Any

import pydantic
from pydantic import BaseModel, ConfigDict, field_validator

from ..errors import ConfigError
from .schedule import (
    MAX_STEPS,
    USER_PREFIX,
    Escalation,
    check_remind,
    escalations_of,
    parse_remind,
    principal,
    schedule_words,
    step_at,
    step_time,
)

__all__ = [  # with, re-exported, the plain part (`schedule`)
    "MAX_STEPS",
    "USER_PREFIX",
    "Escalation",
    "EscalationEntry",
    "StepTime",
    "check_escalate",
    "check_remind",
    "escalations_of",
    "parse_escalate",
    "parse_remind",
    "principal",
    "schedule_words",
    "step_at",
    "step_time",
]

StepTime = Annotated[str, pydantic.BeforeValidator(step_time)]


class EscalationEntry(BaseModel):
    """One escalation as a rule file writes it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    after: StepTime
    to: list[str]

    @field_validator("to")
    @classmethod
    def _principals(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("an escalation names at least one person or group to add")
        named = [principal(name) for name in value]
        if len(set(named)) != len(named):
            raise ValueError(f"an escalation names someone twice: {value!r}")
        return named

    def escalation(self) -> Escalation:
        return Escalation(self.after, tuple(self.to))


def check_escalate(value: list[EscalationEntry] | None) -> list[EscalationEntry] | None:
    if value is not None and len(value) > MAX_STEPS:
        raise ValueError(f"at most {MAX_STEPS} escalations")
    return value


def parse_escalate(value: Any, where: str) -> tuple[Escalation, ...]:
    """A snapshot's `escalate` (sent from outside): ConfigError naming `where` if it is not usable."""
    if not isinstance(value, list):
        raise ConfigError(f"{where} must be a list of {{after, to}} entries")
    try:
        entries = [EscalationEntry.model_validate(item) for item in value]
        check_escalate(entries)
    except pydantic.ValidationError as exc:
        problem = exc.errors()[0]
        at = ".".join(str(part) for part in problem["loc"])
        raise ConfigError(f"{where}{'.' + at if at else ''}: {problem['msg']}") from None
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return tuple(entry.escalation() for entry in entries)
