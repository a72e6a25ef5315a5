"""What a chat card's button carries back (WeCom, Feishu): the decision and the request's id
(the callbacks that bring it are checked for freshness by `freshness`).

Not the approver's handle: a handle is a bearer secret (its link decides without signing in),
and a click needs none: the platform signs it and names the person, whom the server maps to a
signoff user by their address and checks as an approver like any other decision."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .notice import Notice

CLICKABLE = ("approve", "reject")
"""Decisions a click makes by itself; edit and answer need a form, so their buttons open the
notice's link (the request's card in the browser) instead."""
GRANT = "approve_grant"
"""The button that approves and gives a standing grant for calls like it (`signoff.grants`),
where the request's rule allows one (`Notice.grant_minutes`)."""
PREFIX = "so1"


@dataclass(frozen=True)
class Action:
    decision: str
    request_id: str
    minutes: int | None = None
    """For `GRANT`: the grant's lifetime (the server caps it by the rule's `max_grant`)."""

    def payload(self) -> dict[str, Any]:
        """The decision as the API takes it."""
        if self.decision == GRANT and self.minutes is not None:
            return {"type": "approve", "grant": {"minutes": self.minutes}}
        return {"type": self.decision}


def as_key(decision: str, notice: Notice) -> str:
    """One string for a platform that keys its buttons by text (WeCom's `EventKey`); `GRANT`'s
    ends with the grant's minutes."""
    parts = [PREFIX, decision, notice.request_id]
    if decision == GRANT:
        parts.append(str(notice.grant_minutes))
    return "|".join(parts)


def from_key(key: str) -> Action | None:
    """The action in a key made by `as_key`; None for a key that is not signoff's."""
    parts = key.split("|")
    if len(parts) < 3 or parts[0] != PREFIX or not parts[2]:
        return None
    if parts[1] == GRANT and len(parts) == 4:
        minutes = parts[3]
        if not (minutes.isascii() and minutes.isdigit()) or int(minutes) < 1:
            return None
        return Action(GRANT, parts[2], int(minutes))
    if len(parts) != 3 or parts[1] not in CLICKABLE:
        return None
    return Action(parts[1], parts[2])


def as_value(decision: str, notice: Notice) -> dict[str, Any]:
    """The same as a JSON object, for platforms whose buttons carry one (Feishu's `value`)."""
    value: dict[str, Any] = {"signoff": PREFIX, "decision": decision, "request_id": notice.request_id}
    if decision == GRANT:
        value["minutes"] = notice.grant_minutes
    return value


def from_value(value: Any) -> Action | None:
    if not isinstance(value, dict) or value.get("signoff") != PREFIX:
        return None
    decision, request_id = value.get("decision"), value.get("request_id")
    if not isinstance(request_id, str) or not request_id:
        return None
    if decision == GRANT:
        minutes = value.get("minutes")
        if isinstance(minutes, bool) or not isinstance(minutes, int) or minutes < 1:
            return None
        return Action(GRANT, request_id, minutes)
    if decision not in CLICKABLE:
        return None
    return Action(str(decision), request_id)
