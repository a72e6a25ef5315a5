"""A decision checked and recorded in one statement (PostgreSQL's `decide_at_once`): one round trip
instead of reading the request, checking it here, then writing.

The statement takes a pending request only when every check `check_decision` would make holds in
SQL: before its deadline, the actor one of its approvers (by name or group) or its requester when
it names none (unless on behalf), the decision allowed by its rule, a quorum of one, and, for a
response, no answer schema to check. It takes approvals, rejections and responses; an edit (its
args checked against the request's schema, its changes audited) takes the checked path. A rule
that says anything the statement does not know (`RULE_KEYS`) takes it too, so that a check added
to `check_decision` for a new rule field is never skipped here. When the statement changes
nothing, the store's checked path runs as before and refuses, audits and expires as it did.

The audit entry is the one the checked path writes: `{"type", "original_args", "comment" |
"message" | "value"}`. The args as people are shown them are the one part the caller does not
have: the statement writes them as canonical JSON (with `signoff_canonical_json`, migration 0022)
between the text the caller made before and after them, in the entry's data and in its hashed
payload.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .._util import canonical_json, to_iso
from ..audit import entry_payload
from ..decisions import Decision, Edit, Respond, decision_to_dict
from ..requests import STATUS_FOR_DECISION
from ..templates import REDACTED
from .core import Json

DECIDED = "request.decided"
SHOWN_ARGS = "original_args"
RULE_KEYS = (
    # what the statement checks
    "allowed_decisions",
    "approvers",
    "quorum",
    "redact",
    # what deciding does not read
    "channels",
    "on_expire",
    "expire_message",
    "reject_template",
    "modify_template",
    "feedback_template",
    "description",
    "description_prefix",
    "unattended",
    "confirm",
    "origin",
)
"""The rule fields a request's stored rule may hold for the statement to decide it: a new field
takes the checked path until the statement is taught what it means for a decision."""


def fits_one_statement(decision: Decision) -> bool:
    """Whether the statement can take `decision` (an edit's args need checking here)."""
    return not isinstance(decision, Edit)


def decision_words(decision: Decision) -> dict[str, Any]:
    """What the audit entry keeps of what was said: the comment, the message, a response's value."""
    said = decision_to_dict(decision)
    words = {key: said[key] for key in ("comment", "message") if said.get(key) is not None}
    if isinstance(decision, Respond) and decision.value is not None:
        words["value"] = decision.value
    return words


def decide_params(
    request_id: str,
    decision: Decision,
    *,
    decision_id: str,
    actor: str,
    channel: str,
    on_behalf: bool,
    now: datetime,
) -> dict[str, Any]:
    """The `decide_at_once` parameters."""
    at = to_iso(now)
    stored = {**decision_to_dict(decision), "id": decision_id, "actor": actor, "channel": channel, "at": at}
    entries = [("type", decision.type), (SHOWN_ARGS, None), *decision_words(decision).items()]
    data_head, data_tail = around_shown_args(entries)
    hashed_head, hashed_tail = around_shown_args(sorted(entries, key=lambda entry: entry[0]))
    fields = entry_payload(
        at=at, actor=actor, channel=channel, action=DECIDED, request_id=request_id, data_text=""
    )
    return {
        "id": request_id,
        "status": STATUS_FOR_DECISION[decision.type],
        "type": decision.type,
        "decision": Json(stored),
        "keeps_args": decision.type == "approve",
        "now": now,
        "actor": actor,
        "on_behalf": on_behalf,
        "rule_keys": list(RULE_KEYS),
        "mask": canonical_json(REDACTED),
        "at": at,
        "channel": channel,
        "action": DECIDED,
        "request_id": request_id,
        "data_head": data_head,
        "data_tail": data_tail,
        "payload_head": fields[:-1] + hashed_head,
        "payload_tail": hashed_tail + "]",
    }


def around_shown_args(entries: list[tuple[str, Any]]) -> tuple[str, str]:
    """The JSON object of `entries`, in their order, split where the shown args' value goes."""
    parts = [
        canonical_json(key) + ":" + ("" if key == SHOWN_ARGS else canonical_json(value))
        for key, value in entries
    ]
    split = [key for key, _ in entries].index(SHOWN_ARGS) + 1
    return "{" + ",".join(parts[:split]), "".join("," + part for part in parts[split:]) + "}"
