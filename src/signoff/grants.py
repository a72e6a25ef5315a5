"""Standing grants (issue 20 §2, DESIGN §14): deciding a request, an approver may also approve
"calls like this" for a while.

A grant names the tool, what it covers (`scope`: the request's agent, as its token and its
`agent` name together; its app, whichever agent calls; or its creator's thread),
an optional CEL condition over the call (`when`; by default the request's own args exactly), a
lifetime (at most the rule's `max_grant`) and who gave it. A call it covers is approved at once,
by the grant's author, through the grant. A grant covers a call only while all of these hold:
it is neither expired nor revoked; the call's tool and scope are the grant's; its condition is
true, or its args are the request's own (by digest);
a condition that cannot be evaluated is false: when in doubt, ask; the call's own rule
still allows grants (`max_grant`, a quorum of 1); and the author is still among the call's
approvers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, TypeAlias, get_args

from ._util import format_duration, from_iso, parse_duration, to_iso
from .decision_checks import principals_of
from .errors import ConfigError, GrantNotAllowed, InvalidInput
from .execution import args_digest
from .rules.conditions import compile_condition, evaluate_condition
from .rules.effective import RequestRule

GrantScope: TypeAlias = Literal["agent", "app", "thread"]
GRANT_SCOPES: tuple[GrantScope, ...] = get_args(GrantScope)
GRANT_CHANNEL = "grant"
"""The channel a decision made through a grant is recorded on."""
ANY_ARGS = "true"
"""The condition of a grant that covers its tool's calls whatever their args."""


@dataclass(frozen=True, kw_only=True)
class GrantAsk:
    """What an approver asks for with a decision: "approve calls like this for `lifetime`".

    `when` is a CEL condition over `args`, `tool`, `agent`, `app` and `requester`; None means
    the request's own args exactly (kept as their digest: no argument is written in the grant);
    `"true"` (`ANY_ARGS`) means any args."""

    lifetime: timedelta
    scope: GrantScope = "agent"
    when: str | None = None

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"minutes": self.lifetime.total_seconds() / 60, "scope": self.scope}
        if self.when is not None:
            body["when"] = self.when
        return body

    @classmethod
    def parse(cls, data: Any) -> GrantAsk:
        """From a decision's `grant` field: `{"minutes": 30}` or `{"lifetime": "30m"}`, with
        optional `scope` and `when`. InvalidInput (422) naming what is wrong."""
        if not isinstance(data, dict):
            raise InvalidInput("grant must be an object: {minutes, scope?, when?}")
        unknown = sorted(set(data) - {"minutes", "lifetime", "scope", "when"})
        if unknown:
            raise InvalidInput(f"grant has no field {', '.join(map(repr, unknown))}")
        lifetime = _lifetime(data)
        scope = data.get("scope", "agent")
        if scope not in GRANT_SCOPES:
            raise InvalidInput(f"grant.scope must be agent, app or thread, not {scope!r}")
        when = data.get("when")
        if when is not None and (not isinstance(when, str) or not when.strip()):
            raise InvalidInput("grant.when must be a non-empty CEL expression")
        return cls(lifetime=lifetime, scope=scope, when=when)


def _lifetime(data: dict[str, Any]) -> timedelta:
    if ("minutes" in data) == ("lifetime" in data):
        raise InvalidInput("grant needs its lifetime: minutes (a number) or lifetime (as '30m')")
    if "lifetime" in data:
        try:
            lifetime = parse_duration(data["lifetime"])
        except (ValueError, TypeError) as exc:
            raise InvalidInput(f"grant.lifetime: {exc}") from None
    else:
        minutes = data["minutes"]
        if isinstance(minutes, bool) or not isinstance(minutes, int | float) or not math.isfinite(minutes):
            raise InvalidInput("grant.minutes must be a number")
        lifetime = timedelta(minutes=minutes)
    if lifetime <= timedelta(0):
        raise InvalidInput("a grant's lifetime must be positive")
    return lifetime


@dataclass(frozen=True, kw_only=True)
class Grant:
    """A standing approval: calls like one a person approved run without asking until it ends."""

    id: str
    tool_name: str
    scope: GrantScope
    agent: str | None
    app: str | None
    thread_id: str | None
    creator: str | None
    """The agent's user (its token) whose calls an agent or thread grant covers: a name in the
    call (`agent`) is the caller's to choose, the token is not; thread ids are per creator."""
    condition: str | None
    """A CEL condition the call's args must meet; None: `args_digest` says which args."""
    args_digest: str | None
    """The same args only: their digest (`signoff.execution.args_digest`), never the args."""
    granted_by: str
    request_id: str
    created_at: datetime
    expires_at: datetime
    revoked_at: datetime | None = None
    revoked_by: str | None = None

    def is_active(self, now: datetime) -> bool:
        return self.revoked_at is None and self.expires_at > now

    def status(self, now: datetime) -> str:
        if self.revoked_at is not None:
            return "revoked"
        return "active" if self.expires_at > now else "expired"

    def to_dict(self, now: datetime) -> dict[str, Any]:
        return {
            "id": self.id,
            "tool": self.tool_name,
            "scope": self.scope,
            "agent": self.agent,
            "app": self.app,
            "thread_id": self.thread_id,
            "creator": self.creator,
            "when": self.condition,
            "args_digest": self.args_digest,
            "granted_by": self.granted_by,
            "request_id": self.request_id,
            "created_at": to_iso(self.created_at),
            "expires_at": to_iso(self.expires_at),
            "revoked_at": to_iso(self.revoked_at) if self.revoked_at is not None else None,
            "revoked_by": self.revoked_by,
            "status": self.status(now),
        }

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Grant:
        return cls(**{name: row[name] for name in _GRANT_FIELDS})

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Grant:
        """From `to_dict`'s shape (a server's answer)."""
        revoked = data.get("revoked_at")
        return cls(
            id=data["id"],
            tool_name=data["tool"],
            scope=data["scope"],
            agent=data.get("agent"),
            app=data.get("app"),
            thread_id=data.get("thread_id"),
            creator=data.get("creator"),
            condition=data.get("when"),
            args_digest=data.get("args_digest"),
            granted_by=data["granted_by"],
            request_id=data["request_id"],
            created_at=from_iso(data["created_at"]),
            expires_at=from_iso(data["expires_at"]),
            revoked_at=from_iso(revoked) if revoked else None,
            revoked_by=data.get("revoked_by"),
        )

    def matches(self, call: Call) -> bool:
        """Whether the grant's tool, scope and condition cover `call` (its lifetime, the call's
        rule and the author's standing are checked by `covers`)."""
        if call.tool_name != self.tool_name:
            return False
        if self.scope == "agent" and (call.creator != self.creator or call.agent != self.agent):
            return False
        if self.scope == "app" and (self.app is None or call.app != self.app):
            return False
        if self.scope == "thread" and (call.thread_id != self.thread_id or call.creator != self.creator):
            return False
        if self.args_digest is not None and args_digest(call.args) != self.args_digest:
            return False
        if self.condition is None and self.args_digest is None:
            return False  # a grant says what it covers: nothing said, nothing covered
        return condition_holds(self.condition, call)

    @property
    def covers_args(self) -> str:
        """What args it covers, in words."""
        if self.args_digest is not None:
            return "the same args"
        return "any args" if self.condition == ANY_ARGS else str(self.condition)


_GRANT_FIELDS = tuple(Grant.__dataclass_fields__)


@dataclass(frozen=True, kw_only=True)
class Call:
    """What a grant is matched against: a request about to be created."""

    tool_name: str
    args: dict[str, Any]
    agent: str | None
    app: str | None
    requester: str | None
    thread_id: str
    creator: str | None


def condition_holds(condition: str | None, call: Call) -> bool:
    """True only if the condition evaluates to true for the call: an error covers nothing."""
    if condition is None:
        return True
    try:
        result = evaluate_condition(
            condition,
            {
                "args": call.args,
                "tool": call.tool_name,
                "agent": call.agent or "",
                "app": call.app or "",
                "requester": call.requester or "",
                "tool_annotations": {},
            },
        )
    except ConfigError:
        return False
    return result.error is None and result.value


def check_grant_ask(ask: GrantAsk, rule: RequestRule, *, kind: str, app: str | None) -> None:
    """Raise GrantNotAllowed (422) saying why the request's rule allows no such grant (or why
    its condition is not CEL)."""
    if kind != "tool":
        raise GrantNotAllowed("a standing grant approves tool calls; this request asks a question")
    if rule.quorum > 1:
        raise GrantNotAllowed(f"no standing grants where {rule.quorum} approvers must agree")
    if rule.max_grant is None:
        raise GrantNotAllowed(
            "this request's rule allows no standing grants (a rule allows them with max_grant; "
            "never for a quorum over 1, nor for a hitl_required tool unless the app says grants_for_required)"
        )
    if ask.lifetime > rule.max_grant:
        raise GrantNotAllowed(
            f"a grant for {format_duration(ask.lifetime)} is longer than this rule's "
            f"max_grant of {format_duration(rule.max_grant)}"
        )
    if ask.scope == "app" and app is None:
        raise GrantNotAllowed("this request names no app: grant for its agent or its thread instead")
    if ask.when is not None:
        try:
            compile_condition(ask.when)
        except ConfigError as exc:
            raise GrantNotAllowed(f"grant.when: {exc.message}") from None


def may_still_approve(
    approvers: Sequence[str], requester: str | None, author: str, groups: Callable[[str], Sequence[str]]
) -> bool:
    """Whether `author` would be among the approvers of a request with this rule and requester
    (`signoff.decision_checks.may_decide`, for a request not yet written)."""
    if not approvers:
        return requester is None or author == requester
    return any(principal in approvers for principal in principals_of(author, groups(author)))


__all__ = [
    "ANY_ARGS",
    "GRANT_CHANNEL",
    "GRANT_SCOPES",
    "Call",
    "Grant",
    "GrantAsk",
    "GrantScope",
    "check_grant_ask",
    "condition_holds",
    "may_still_approve",
]
