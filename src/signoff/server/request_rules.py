"""Whose rules a request asked through the API follows (DESIGN §4, "Where rules live").

Whether to ask is the agent's call: its own code runs the gate. But who may decide (approvers),
the quorum, unattended handling, the deadline, `on_expire`, reminders and escalations come from
the server's rules wherever they cover the tool (they ask for this call), and from the agent
only where they don't and the server takes agents' rules (`signoff serve --agent-rules allow`,
the default: for a tool the server's rules do not cover, the agent could as well not ask at all,
so its rules give it nothing it does not have; `deny` makes the server's defaults apply to such
requests instead).

The rest of a rule is the agent's: its texts and description template; where both say something,
the allowed decisions are those both allow, the redacted args those either names, and a call
either calls destructive (`confirm`) is asked about once more, one either keeps out of batches
(`batch: false`) is decided alone, and where both say who may not approve (four eyes:
`separation`), the stricter holds. Standing grants (`max_grant`) are the server's alone: only
where its rules ask for the call.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Literal, TypeAlias

from ..rules.effective import stricter_separation
from ..rules.model import Authority, RequestRule, RuleOrigin
from ..rules.resolve import Explanation

AgentRules: TypeAlias = Literal["allow", "deny"]
INPUT_RULE = RequestRule(allowed_decisions=("respond", "reject"))
"""A question to a person (`gate.ask`) that names no rule of its own."""


@dataclass(frozen=True)
class Governed:
    """What a new request will follow: its rule and how long it may wait."""

    rule: RequestRule
    deadline: timedelta


def governed_rule(
    explanation: Explanation,
    *,
    snapshot: RequestRule | None,
    kind: str,
    approvers: tuple[str, ...] = (),
    deadline: timedelta | None = None,
    agent_rules: AgentRules = "allow",
) -> Governed:
    """The rule of a request the agent asked with `snapshot` (its gate's rule, or None), its own
    `approvers` (for when the rule names none) and `deadline`, given the server's `explanation`
    of the same call."""
    server = explanation.rule
    asked = RuleOrigin(source="agent")
    if snapshot is not None:
        asked = snapshot.origin or asked
    elif kind == "input":
        snapshot = INPUT_RULE
    else:
        snapshot = server.for_request()
        asked = RuleOrigin(source="server", layer=explanation.layer, key=explanation.deciding_key)
    if explanation.ask:
        return _as_the_server_says(explanation, snapshot, approvers, agent_rules)
    if agent_rules == "allow":
        rule = snapshot
        if approvers and not rule.approvers:
            rule = replace(rule, approvers=approvers)
        authority: Authority = "server" if asked.source == "server" else "agent"
        rule = replace(rule, origin=replace(asked, authority=authority), max_grant=None)
        return Governed(rule, deadline or server.deadline)
    rule = replace(
        snapshot,
        approvers=server.approvers,
        channels=server.channels,
        quorum=server.quorum,
        on_expire=server.on_expire,
        expire_message=server.expire_message,
        unattended=server.unattended,
        confirm=server.confirm or snapshot.confirm,
        separation=stricter_separation(server.separation, snapshot.separation),
        batch=server.batch and snapshot.batch,
        max_grant=None,
        remind=server.remind,
        escalate=server.escalate,
        origin=replace(asked, authority="server"),
    )
    return Governed(rule, server.deadline)


def _as_the_server_says(
    explanation: Explanation, snapshot: RequestRule, approvers: tuple[str, ...], agent_rules: AgentRules
) -> Governed:
    server = explanation.rule
    allowed = tuple(kind for kind in snapshot.allowed_decisions if kind in server.allowed_decisions)
    chosen = server.approvers
    if not chosen and agent_rules == "allow":  # the server lets any person decide: the agent may narrow it
        chosen = snapshot.approvers or approvers
    rule = replace(
        snapshot,
        allowed_decisions=allowed or server.allowed_decisions,
        approvers=chosen,
        channels=tuple(dict.fromkeys((*server.channels, *snapshot.channels))),
        quorum=server.quorum,
        on_expire=server.on_expire,
        expire_message=server.expire_message,
        unattended=server.unattended,
        redact=tuple(dict.fromkeys((*server.redact, *snapshot.redact))),
        confirm=server.confirm or snapshot.confirm,
        separation=stricter_separation(server.separation, snapshot.separation),
        batch=server.batch and snapshot.batch,
        max_grant=server.max_grant,
        remind=server.remind,
        escalate=server.escalate,
        origin=RuleOrigin(
            source="server", layer=explanation.layer, key=explanation.deciding_key, authority="server"
        ),
    )
    return Governed(rule, server.deadline)
