"""A rule snapshot sent from outside (the `rule` of `POST /v1/requests`), checked field by field.

A gate that resolved its own rules sends the rule it asked under. Every key must be one a
request's rule has (a typo'd `approver` would otherwise silently mean "anyone"), and every value
must have its field's type; the first problem is refused with a message naming the field.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, get_args

from ..decisions import DECISION_TYPES
from ..errors import ConfigError
from ..visible import check_name
from .effective import OnExpire, OriginSource, RequestRule, RuleOrigin, Separation, UnattendedMode
from .schedule_model import parse_escalate, parse_remind
from .settings import CHANNEL_NAME

MAX_QUORUM = 100
LIST_FIELDS = ("allowed_decisions", "approvers", "channels", "redact")
TEXT_FIELDS = (
    "expire_message",
    "reject_template",
    "modify_template",
    "feedback_template",
    "description",
    "description_prefix",
)
BOOL_FIELDS = ("confirm", "batch")
RULE_FIELDS = tuple(item.name for item in fields(RequestRule))
ORIGIN_FIELDS = tuple(item.name for item in fields(RuleOrigin))
CHOICES: dict[str, tuple[str, ...]] = {
    "on_expire": get_args(OnExpire),
    "unattended": get_args(UnattendedMode),
    "separation": get_args(Separation),
}


def parse_snapshot(data: Any, *, what: str = "rule") -> RequestRule:
    """The `RequestRule` in `data`; ConfigError (422) naming the first field that cannot be used."""
    if not isinstance(data, dict):
        raise ConfigError(f"{what} must be an object")
    _refuse_unknown(data, RULE_FIELDS, what)
    values: dict[str, Any] = {}
    for name, value in data.items():
        if name == "max_grant":  # standing grants are the server's rules' to allow: never the agent's
            continue
        where = f"{what}.{name}"
        if name in LIST_FIELDS:
            values[name] = _strings(value, where)
        elif name in TEXT_FIELDS:
            if not isinstance(value, str):
                raise ConfigError(f"{where} must be a string")
            values[name] = value
        elif name in CHOICES:
            if value not in CHOICES[name]:
                raise ConfigError(f"{where} must be {_or(CHOICES[name])}, not {value!r}")
            values[name] = value
        elif name in BOOL_FIELDS:
            if not isinstance(value, bool):
                raise ConfigError(f"{where} must be true or false")
            values[name] = value
        elif name == "quorum":
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_QUORUM:
                raise ConfigError(f"{where} must be a whole number from 1 to {MAX_QUORUM}")
            values[name] = value
        elif name == "origin":
            values[name] = parse_origin(value, what=where)
        elif name == "separated":
            raise ConfigError(f"{where} is the server's to say: it names them from the request")
        elif name == "remind":
            values[name] = parse_remind(value, where)
        elif name == "escalate":
            values[name] = parse_escalate(value, where)
    decisions = values.get("allowed_decisions")
    if decisions is not None:
        unknown = [kind for kind in decisions if kind not in DECISION_TYPES]
        if not decisions or unknown or len(set(decisions)) != len(decisions):
            raise ConfigError(
                f"{what}.allowed_decisions must name approve, edit, reject or respond, each once: "
                f"{list(decisions)!r}"
            )
    for channel in values.get("channels", ()):
        if not CHANNEL_NAME.match(channel):
            raise ConfigError(f"{what}.channels entry {channel!r} is not a channel's name")
    for principal in values.get("approvers", ()):
        check_name(principal, f"{what}.approvers entry")
    return RequestRule(**values)


def parse_origin(data: Any, *, what: str = "rule.origin") -> RuleOrigin:
    if not isinstance(data, dict):
        raise ConfigError(f"{what} must be an object")
    _refuse_unknown(data, ORIGIN_FIELDS, what)
    source = data.get("source")
    sources: tuple[OriginSource, ...] = get_args(OriginSource)
    if source not in sources:
        raise ConfigError(f"{what}.source must be {_or(sources)}, not {source!r}")
    for name in ("layer", "key", "path"):
        value = data.get(name)
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{what}.{name} must be a string")
    authority = data.get("authority")
    if authority is not None:
        raise ConfigError(f"{what}.authority is the server's to say")
    chosen = next(known for known in sources if known == source)
    return RuleOrigin(source=chosen, layer=data.get("layer"), key=data.get("key"), path=data.get("path"))


def _refuse_unknown(data: dict[str, Any], known: tuple[str, ...], what: str) -> None:
    unknown = [key for key in data if key not in known]
    if unknown:
        named = ", ".join(repr(key) for key in unknown)
        raise ConfigError(f"{what} has no field {named}; its fields are {', '.join(known)}")


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise ConfigError(f"{where} must be a list of non-empty strings")
    return tuple(value)


def _or(choices: tuple[str, ...]) -> str:
    return ", ".join(choices[:-1]) + " or " + choices[-1]
