"""What a rule says about nudging people while a request waits (DESIGN §14): `remind` re-notifies
the approvers at the times it lists, and `escalate` adds approvers after a delay.

    remind:   [30m, 2h]          # or fractions of the deadline: [50%, 90%]
    escalate: [{after: 4h, to: [group:oncall]}, {after: 12h, to: [user:cto]}]

A time is a duration after the request was made (`30m`, `2h`, `1d`) or a fraction of its
deadline (`50%`: halfway from when it was made to its deadline). Steps that would fall at or after
the deadline are never planned (the deadline and `on_expire` apply as they always do). Escalation
names people (`alice`, or `user:alice`) and groups (`group:oncall`), as `approvers` does; the
requester is not named here (a request for no one would escalate to nobody).

The plain part: times, escalations and their words, for requests and their steps; the rule
files' pydantic models of them are in `schedule_model`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from .._util import format_duration, parse_duration
from ..errors import ConfigError, InvalidInput
from ..visible import check_name

USER_PREFIX = "user:"
"""`user:cto` is the person `cto`: the form escalation lists may use for clarity."""
MAX_STEPS = 20
"""The most reminders, or escalations, one rule may plan."""
_FRACTION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")


def step_time(value: Any) -> str:
    """A step's time in its canonical form: `30m`, `2h`, `90s`, or `50%` (of the deadline);
    ValueError saying why for anything else (zero, negative, 100% or more, not a time)."""
    if isinstance(value, str) and "%" in value:
        match = _FRACTION.match(value)
        if match is None:
            raise ValueError(f"not a fraction of the deadline: {value!r} (use e.g. 50%)")
        percent = float(match.group(1))
        if not 0 < percent < 100 or math.isnan(percent):
            raise ValueError(f"a fraction of the deadline is more than 0% and less than 100%, not {value!r}")
        return f"{percent:g}%"
    return format_duration(parse_duration(value))


def step_at(spec: str, created: datetime, deadline: datetime) -> datetime:
    """When a step written `spec` (canonical, see `step_time`) falls, for a request made at
    `created` with this `deadline`."""
    if spec.endswith("%"):
        return created + (deadline - created) * (float(spec[:-1]) / 100)
    return created + parse_duration(spec)


def principal(name: str) -> str:
    """An escalation's principal as approvers are kept: `user:cto` is `cto`, a group stays
    `group:NAME`; ValueError for an empty name, `requester`, or hidden characters."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError("an escalation names people or groups; an empty name names nobody")
    named = name[len(USER_PREFIX) :] if name.startswith(USER_PREFIX) else name
    if not named.strip() or named == "group:":
        raise ValueError(f"{name!r} names nobody")
    if named == "requester":
        raise ValueError("escalate to named people or groups, not to the requester")
    try:
        check_name(named, "escalation entry")
    except InvalidInput as exc:
        raise ValueError(exc.message) from None
    return named


@dataclass(frozen=True)
class Escalation:
    """After `after` (canonical: a duration or a fraction of the deadline), add `to` as approvers."""

    after: str
    to: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"after": self.after, "to": list(self.to)}

    def shown(self) -> str:
        return f"after {self.after} to {', '.join(self.to)}"


def check_remind(value: list[str] | None) -> list[str] | None:
    """A rule's `remind` list (already canonical): each time once, at most MAX_STEPS."""
    if value is None:
        return None
    if len(value) > MAX_STEPS:
        raise ValueError(f"at most {MAX_STEPS} reminders")
    if len(set(value)) != len(value):
        raise ValueError(f"a reminder time is written twice: {value!r}")
    return value


def parse_remind(value: Any, where: str) -> tuple[str, ...]:
    """A snapshot's `remind` (sent from outside): ConfigError naming `where` if it is not usable."""
    if not isinstance(value, list):
        raise ConfigError(f"{where} must be a list of times (30m, 2h, 50%)")
    try:
        times = [step_time(item) for item in value]
        check_remind(times)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return tuple(times)


def escalations_of(value: Any) -> tuple[Escalation, ...]:
    """Stored escalations back (trusted: the store or the rules model wrote them)."""
    escalations: list[Escalation] = []
    for item in value or ():
        if isinstance(item, Escalation):
            escalations.append(item)
        elif isinstance(item, Mapping):
            escalations.append(Escalation(str(item["after"]), tuple(item["to"])))
        else:  # the rules model's EscalationEntry
            escalations.append(item.escalation())
    return tuple(escalations)


def schedule_words(
    remind: tuple[str, ...], escalate: tuple[Escalation, ...], deadline: timedelta
) -> list[str]:
    """What a rule's reminders and escalations do, in words (`signoff explain`), for a request
    waiting `deadline`: a step at or after the deadline is said never to come."""
    start = datetime(2000, 1, 1)
    end = start + deadline

    def when(spec: str) -> str:
        at = step_at(spec, start, end)
        if at >= end:
            return f"{spec} (at or after the {format_duration(deadline)} deadline: never)"
        return spec if not spec.endswith("%") else f"{spec} (after {format_duration(at - start)})"

    lines = []
    if remind:
        lines.append(f"reminders: {', '.join(when(spec) for spec in remind)}")
    for escalation in escalate:
        lines.append(f"escalation: after {when(escalation.after)}, add {', '.join(escalation.to)}")
    return lines
