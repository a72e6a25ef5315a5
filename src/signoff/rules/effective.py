"""What the rules say about one call: the effective `Rule` (the layers resolved), the part of it
a stored request keeps (`RequestRule`), and where that came from (`RuleOrigin`); with the
built-in value of each setting that no layer sets."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import timedelta
from typing import Any, Literal, TypeAlias

from ..decisions import DECISION_TYPES, DecisionType
from .callables import DescribeFn, WhenFn, shown
from .schedule import Escalation, escalations_of

DEFAULT_DESCRIPTION_PREFIX = "Tool execution requires approval"
DEFAULT_DESCRIPTION = "{prefix}\n\nTool: {tool_name}\nArgs: {tool_args}"
DEFAULT_REJECT_TEMPLATE = "Tool execution for '{tool_name}' was rejected by the user."
DEFAULT_MODIFY_TEMPLATE = (
    "The parameters for tool '{tool_name}' were updated by the user to:\n{final_tool_params}"
)
DEFAULT_FEEDBACK_TEMPLATE = "With user feedback: {feedback}"
DEFAULT_EXPIRE_MESSAGE = "The approval request expired."
DEFAULT_DEADLINE = timedelta(hours=24)
INBOX_CHANNEL = "inbox"
"""The web inbox: where every request shows. A rule's `channels` default to it alone."""
DEFAULT_CHANNELS: tuple[str, ...] = (INBOX_CHANNEL,)
REQUESTER = "requester"
"""The approver that names the user the agent acts for (`Scope.requester`; seed 004)."""
REQUESTER_UNKNOWN = "requester:unknown"
"""What `requester` becomes on a request that has no requester: a principal nobody has, so
that nobody decides it (it expires) rather than anybody."""

DESTRUCTIVE_HINT = "destructiveHint"
"""The tool annotation (MCP's) by which a tool says a call may destroy something."""

Separation: TypeAlias = Literal["requester", "requester_and_creator"]
"""Four eyes (DESIGN §14): who may not approve a request of theirs. `requester`: the person the
agent acts for; `requester_and_creator`: nor the one who owns the agent's token (and the
request's creator itself)."""
SeparationSetting: TypeAlias = Literal["none", "requester", "requester_and_creator"]
"""What a rule layer may say: `none` turns off a separation a layer beneath set."""
SEPARATION_STRENGTH: dict[Separation | None, int] = {None: 0, "requester": 1, "requester_and_creator": 2}


def stricter_separation(first: Separation | None, second: Separation | None) -> Separation | None:
    """The separation that keeps more people from approving (where two rules both have a say)."""
    return first if SEPARATION_STRENGTH[first] >= SEPARATION_STRENGTH[second] else second


def separation_words(separation: Separation | None) -> str:
    """The rule's four eyes, in words (explain, cards, the request page)."""
    if separation == "requester":
        return "four eyes: the requester may not approve"
    if separation == "requester_and_creator":
        return "four eyes: the requester and the agent's owner may not approve"
    return "no separation: the requester may approve their own request where the rule names them"


def who_decides(
    approvers: tuple[str, ...], requester: str | None = None, separation: Separation | None = None
) -> str:
    """Who may decide a request under a rule with these approvers, in words (`explain`): with
    `requester` given, for a call made for that person; else in general. Under `separation`,
    who may not approve is said after."""
    said = _who_decides(approvers, requester)
    if separation is None:
        return said
    return f"{said}; {separation_words(separation)} (they may reject)"


def _who_decides(approvers: tuple[str, ...], requester: str | None) -> str:
    if not approvers:
        if requester:
            return f"{requester} alone: the rule names no approvers, so the call's requester decides"
        return (
            "the call's requester: the rule names no approvers (a call without a requester: any "
            "person, never an agent)"
        )
    if REQUESTER not in approvers:
        return ", ".join(approvers)
    others = [name for name in approvers if name != REQUESTER]
    if requester:
        return ", ".join([f"{requester} (the requester)", *others])
    if others:
        return ", ".join(["the call's requester", *others])
    return "the call's requester (a call without a requester: nobody; it expires)"


OnExpire: TypeAlias = Literal["reject", "approve", "fail"]
UnattendedMode: TypeAlias = Literal["approve", "reject", "fail"]


@dataclass(frozen=True, kw_only=True)
class Rule:
    """The effective answer for one call: ask or not, and how."""

    ask: bool
    allowed_decisions: tuple[DecisionType, ...] = DECISION_TYPES
    description: str | DescribeFn = DEFAULT_DESCRIPTION
    """A template, or (declared in code) a callable that writes the card."""
    description_prefix: str = DEFAULT_DESCRIPTION_PREFIX
    when: str | WhenFn | None = None
    """A CEL condition, or (declared in code) a callable."""
    approvers: tuple[str, ...] = ()
    channels: tuple[str, ...] = DEFAULT_CHANNELS
    """Where the approvers are told: the web inbox, and configured channels by name."""
    deadline: timedelta = DEFAULT_DEADLINE
    on_expire: OnExpire = "reject"
    expire_message: str = DEFAULT_EXPIRE_MESSAGE
    quorum: int = 1
    redact: tuple[str, ...] = ()
    reject_template: str = DEFAULT_REJECT_TEMPLATE
    modify_template: str = DEFAULT_MODIFY_TEMPLATE
    feedback_template: str = DEFAULT_FEEDBACK_TEMPLATE
    unattended: UnattendedMode = "approve"
    confirm: bool = False
    """Destructive: an approval by keyboard in the inbox asks once more (`RequestRule.confirm`)."""
    separation: Separation | None = None
    """Four eyes: who may not approve (`RequestRule.separated` names them per request)."""
    batch: bool = True
    """False: decided one at a time, never in a batch (`RequestRule.batch`)."""
    max_grant: timedelta | None = None
    """The longest standing grant an approver may give (None: grants are off). Already None
    where grants cannot be: a quorum over 1, or a `hitl_required` tool the app keeps from them."""
    remind: tuple[str, ...] = ()
    """When to re-notify the approvers: durations after the request was made, or `N%` of its deadline."""
    escalate: tuple[Escalation, ...] = ()
    """Whom to add as approvers, and when (`signoff.rules.schedule`)."""
    required: bool = False
    """Set by the app's `hitl_required`: nothing can silence it."""
    extra: dict[str, Any] = field(default_factory=dict)

    def for_request(self, origin: RuleOrigin | None = None) -> RequestRule:
        """What a stored request keeps of its rule, so later rule edits don't change it. A callable
        description is kept by its name: the request's description holds what it wrote."""
        kept = {
            item.name: getattr(self, item.name)
            for item in fields(RequestRule)
            if item.name not in ("origin", "separated")
        }
        kept["description"] = shown(self.description)
        return RequestRule(**kept, origin=origin)


OriginSource: TypeAlias = Literal["code", "file", "store", "server", "agent"]
Authority: TypeAlias = Literal["server", "agent"]


@dataclass(frozen=True, kw_only=True)
class RuleOrigin:
    """Where a request's rule came from.

    `source` is whose rules asked: `code` (declared in the gate's code: `@guard`, `register_tool`,
    a `RuleSet` given to the gate), `file` (the gate's rules file, at `path`), `store` (the layers
    kept in the gate's store), `server` (the server's rules), or `agent` (an agent's own rules,
    origin unsaid). `layer` and `key` name the entry that decided, as `explain` does. On a
    server, `authority` says whose rules set who decides, the quorum, the deadline, `on_expire`
    and unattended handling: the server's, or the agent's where the server's rules do not cover
    the tool and it takes agents' rules (`signoff serve --agent-rules allow`).
    """

    source: OriginSource
    layer: str | None = None
    key: str | None = None
    path: str | None = None
    authority: Authority | None = None

    def to_dict(self) -> dict[str, str]:
        return {item.name: value for item in fields(self) if (value := getattr(self, item.name)) is not None}


@dataclass(frozen=True, kw_only=True)
class RequestRule:
    """The part of a rule a stored request carries."""

    allowed_decisions: tuple[DecisionType, ...] = DECISION_TYPES
    approvers: tuple[str, ...] = ()
    channels: tuple[str, ...] = DEFAULT_CHANNELS
    quorum: int = 1
    on_expire: OnExpire = "reject"
    expire_message: str = DEFAULT_EXPIRE_MESSAGE
    redact: tuple[str, ...] = ()
    reject_template: str = DEFAULT_REJECT_TEMPLATE
    modify_template: str = DEFAULT_MODIFY_TEMPLATE
    feedback_template: str = DEFAULT_FEEDBACK_TEMPLATE
    description: str = DEFAULT_DESCRIPTION
    description_prefix: str = DEFAULT_DESCRIPTION_PREFIX
    unattended: UnattendedMode = "approve"
    """What an unattended run may decide on its own (checked by the server on `on_behalf`)."""
    confirm: bool = False
    """The call is destructive (the rule's `confirm: true`, or the tool's own `destructiveHint`):
    the inbox asks once more before a keyboard approval."""
    separation: Separation | None = None
    separated: tuple[str, ...] = ()
    """The people `separation` keeps from approving this request (approve, edit, respond; they
    may still reject), named when it was created (`for_separation`)."""
    batch: bool = True
    """False (the rule's `batch: false`): a batch decision skips the request; it is decided alone."""
    max_grant: timedelta | None = None
    """The longest standing grant its approvers may give; None: none. Only the server's rules set it."""
    remind: tuple[str, ...] = ()
    escalate: tuple[Escalation, ...] = ()
    """The request's planned reminders and escalations (planned when it is made: `signoff.steps`)."""
    origin: RuleOrigin | None = None

    @classmethod
    def from_snapshot(cls, data: dict[str, Any]) -> RequestRule:
        """A stored snapshot back (trusted: the store wrote it). Input from outside goes through
        `signoff.rules.snapshot.parse_snapshot`, which refuses what it does not know."""
        defaults = _REQUEST_RULE_DEFAULTS
        values: dict[str, Any] = {
            key: tuple(value) if isinstance(value, list) else value
            for key, value in data.items()
            if key in defaults
        }
        if isinstance(values.get("max_grant"), int | float):
            values["max_grant"] = timedelta(seconds=values["max_grant"])
        if "escalate" in values:
            values["escalate"] = escalations_of(values["escalate"])
        origin = values.get("origin")
        if isinstance(origin, dict):
            values["origin"] = RuleOrigin(**{key: origin[key] for key in _ORIGIN_FIELDS if key in origin})
        return cls(**values)

    def for_requester(self, requester: str | None) -> RequestRule:
        """The rule as one request keeps it: `requester` among the approvers becomes the user the
        agent acts for (or, with none, `REQUESTER_UNKNOWN`, whom nobody is); a rule naming no
        approvers names the requester, if the request has one (else any person decides)."""
        if not self.approvers:
            return replace(self, approvers=(requester,)) if requester else self
        if REQUESTER not in self.approvers:
            return self
        person = requester or REQUESTER_UNKNOWN
        named = tuple(dict.fromkeys(person if name == REQUESTER else name for name in self.approvers))
        return replace(self, approvers=named)

    def for_separation(
        self, requester: str | None, *, creator: str | None, creator_owner: str | None
    ) -> RequestRule:
        """The rule as one request keeps it: the people its `separation` keeps from approving,
        named now (whatever a caller sent as `separated` is replaced). `requester_and_creator`
        names the request's creator and the owner of the token it asked with as well."""
        names: list[str | None] = []
        if self.separation is not None:
            names.append(requester)
        if self.separation == "requester_and_creator":
            names.extend((creator_owner, creator))
        separated = tuple(dict.fromkeys(name for name in names if name))
        return self if separated == self.separated else replace(self, separated=separated)

    def for_annotations(self, annotations: Mapping[str, Any] | None) -> RequestRule:
        """The rule as one request keeps it: a tool that says it is destructive (MCP's
        `destructiveHint: true`) is confirmed as a rule's `confirm: true` would have it. What a
        tool says can only add the second ask, never take the rule's away."""
        if self.confirm or not annotations or annotations.get(DESTRUCTIVE_HINT) is not True:
            return self
        return replace(self, confirm=True)

    def snapshot(self) -> dict[str, Any]:
        """The fields that differ from the defaults (stored with every request, so kept small)."""
        return {
            name: _snapshot_value(value)
            for name, default in _REQUEST_RULE_DEFAULTS.items()
            if (value := getattr(self, name)) != default
        }


def _snapshot_value(value: Any) -> Any:
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, tuple):
        return [item.to_dict() if isinstance(item, Escalation) else item for item in value]
    if isinstance(value, RuleOrigin):
        return value.to_dict()
    return value


_REQUEST_RULE_DEFAULTS: dict[str, Any] = {item.name: item.default for item in fields(RequestRule)}
_ORIGIN_FIELDS = tuple(item.name for item in fields(RuleOrigin))
