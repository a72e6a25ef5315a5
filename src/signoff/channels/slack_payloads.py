"""Slack's interaction payloads (already verified) read into `Inbound`s.

Slack posts every interaction to the one Interactivity Request URL as a form with one field,
`payload`, holding JSON. What we read from it:

- `block_actions`, one of our buttons (`signoff.approve` …, value: the request id): approve is a
  decision at once; edit, answer and reject are replies with `extra["open"]` naming the modal
  to open (`trigger_id`, valid for 3 s, in `extra` too); `signoff.open` (a link button, which
  Slack reports as well) needs only the ack;
- `view_submission` of our modals (`private_metadata` names the request): a reject is a
  decision (its reason typed in the modal); an edit's or answer's typed fields are a reply with
  `extra["values"]`, for `slack_interactions` to read against the request's schema; a batch's
  (`signoff.batch`) a reply with the ids it lists in `extra["ids"]` (see `slack_batch`);
- `view_closed`: nothing; anything else (a shortcut, a slash command, another app's button):
  a short ephemeral saying what this endpoint is for.

`extra` always says `type` (block_actions, view_submission, view_closed, link, unknown) and,
where known, the message's `slack_channel` and `ts`, for the answer and the log.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs

from .buttons import GRANT
from .contract import BadCallback, Inbound
from .slack_blocks import (
    ACTION_PREFIX,
    BATCH_ACTION,
    BATCH_VIEW,
    EDIT_VIEW,
    GRANT_ACTION,
    GRANT_SEPARATOR,
    MESSAGE_BLOCK,
    MODAL_DECISIONS,
    OPEN_ACTION,
    REJECT_VIEW,
    RESPOND_VIEW,
    submitted_values,
)
from .texts import Locale

UNKNOWN: dict[Locale, str] = {
    "en": "signoff only answers its own request buttons here; open the request in signoff instead.",
    "zh": "这里只处理 signoff 请求卡片上的按钮；请在 signoff 中打开该请求。",
}


def read_form(body: bytes) -> dict[str, Any] | None:
    """The JSON object in the form field `payload`; None for a form without one (a slash
    command). Raises `BadCallback` for a body that is no form, or a payload that is no JSON object."""
    try:
        form = parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=bool(body))
    except (UnicodeDecodeError, ValueError):
        raise BadCallback("the Slack callback is not a URL-encoded form") from None
    if "payload" not in form:
        return None
    try:
        payload = json.loads(form["payload"][0])
    except json.JSONDecodeError as exc:
        raise BadCallback(f"the Slack callback's payload is not JSON ({exc.msg})") from None
    if not isinstance(payload, dict):
        raise BadCallback("the Slack callback's payload is not a JSON object")
    return payload


def unknown(locale: Locale, sender: str | None = None, slack_channel: str | None = None) -> Inbound:
    """What is not ours: the answer says so (a slash command shows it; for a click on a message,
    `slack_channel` says where to post it as an ephemeral)."""
    reply = {"response_type": "ephemeral", "text": UNKNOWN[locale]}
    extra = {"type": "unknown", "slack_channel": slack_channel}
    return Inbound(kind="reply", reply=reply, sender=sender, extra=extra)


def parse_interaction(payload: dict[str, Any], locale: Locale) -> Inbound:
    kind = payload.get("type")
    sender = _text(_object(payload, "user").get("id"))
    if kind == "block_actions":
        return _block_action(payload, sender, locale)
    if kind == "view_submission":
        return _view_submission(payload, sender, locale)
    if kind == "view_closed":
        return Inbound(kind="reply", reply=None, sender=sender, extra={"type": kind})
    return unknown(locale, sender)


def _granting(value: str) -> tuple[str | None, dict[str, Any]]:
    """The request and the approval with its grant, from a grant button's `REQUEST_ID|MINUTES`
    (None for a value that is not one: nothing is decided)."""
    request_id, _, minutes = value.partition(GRANT_SEPARATOR)
    if not minutes.isdigit() or int(minutes) < 1:
        return None, {}
    return request_id, {"type": "approve", "grant": {"minutes": int(minutes)}}


def _block_action(payload: dict[str, Any], sender: str | None, locale: Locale) -> Inbound:
    actions = payload.get("actions")
    action = actions[0] if isinstance(actions, list) and actions and isinstance(actions[0], dict) else {}
    action_id = _text(action.get("action_id")) or ""
    container = _object(payload, "container")
    extra: dict[str, Any] = {
        "type": "block_actions",
        "action": action_id,
        "trigger_id": _text(payload.get("trigger_id")),
        "slack_channel": _text(container.get("channel_id")) or _text(_object(payload, "channel").get("id")),
        "ts": _text(container.get("message_ts")) or _text(_object(payload, "message").get("ts")),
    }
    if action_id == OPEN_ACTION:
        return Inbound(kind="reply", reply=None, sender=sender, extra={**extra, "type": "link"})
    request_id = _text(action.get("value"))
    decision = action_id.removeprefix(ACTION_PREFIX) if action_id.startswith(ACTION_PREFIX) else None
    approval: dict[str, Any] = {"type": "approve"}
    if action_id == GRANT_ACTION and request_id is not None:
        request_id, approval = _granting(request_id)
    if not request_id or not sender or decision is None:
        return unknown(locale, sender, extra["slack_channel"])
    if decision in ("approve", GRANT):
        return Inbound(
            sender=sender,
            request_id=request_id,
            decision=approval,
            delivery_id=_delivery(payload),
            extra=extra,
        )
    if action_id == BATCH_ACTION:
        return Inbound(
            kind="reply", reply=None, sender=sender, request_id=request_id, extra={**extra, "open": "batch"}
        )
    if decision in MODAL_DECISIONS:
        return Inbound(
            kind="reply", reply=None, sender=sender, request_id=request_id, extra={**extra, "open": decision}
        )
    return unknown(locale, sender, extra["slack_channel"])


def _view_submission(payload: dict[str, Any], sender: str | None, locale: Locale) -> Inbound:
    view = _object(payload, "view")
    callback = view.get("callback_id")
    meta = _metadata_of(view)
    request_id = _text(meta.get("request_id"))
    if callback not in (EDIT_VIEW, REJECT_VIEW, RESPOND_VIEW, BATCH_VIEW) or not request_id or not sender:
        return unknown(locale, sender)
    values = submitted_values(view)
    if callback == BATCH_VIEW:  # its ids are checked when it is decided (`slack_batch`)
        batch = {"type": "view_submission", "view": callback, "values": values, "ids": meta.get("ids")}
        return Inbound(
            kind="reply",
            reply=None,
            sender=sender,
            request_id=request_id,
            delivery_id=_delivery(payload),
            extra=batch,
        )
    extra: dict[str, Any] = {
        "type": "view_submission",
        "view": callback,
        "values": values,
        "slack_channel": _text(meta.get("channel")),
        "ts": _text(meta.get("ts")),
        "error_block": MESSAGE_BLOCK,
    }
    if callback == REJECT_VIEW:
        reason = values.get(MESSAGE_BLOCK, "").strip()
        return Inbound(
            sender=sender,
            request_id=request_id,
            decision={"type": "reject", **({"message": reason} if reason else {})},
            delivery_id=_delivery(payload),
            extra=extra,
        )
    return Inbound(
        kind="reply",
        reply=None,
        sender=sender,
        request_id=request_id,
        delivery_id=_delivery(payload),
        extra=extra,
    )


def _object(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _metadata_of(view: dict[str, Any]) -> dict[str, Any]:
    try:
        meta = json.loads(view.get("private_metadata") or "{}")
    except (json.JSONDecodeError, TypeError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _delivery(payload: dict[str, Any]) -> str | None:
    """The callback's idempotency key: Slack's trigger id is new for every interaction."""
    trigger = _text(payload.get("trigger_id"))
    return f"slack:{trigger}" if trigger else None
