"""Slack's side of an interaction, for tests: payloads shaped as Slack documents them, form-
encoded and signed with Slack's v0 scheme (HMAC-SHA256 of `v0:{timestamp}:{body}`)."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import time
from typing import Any
from urllib.parse import urlencode

SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
_triggers = itertools.count(1)


def signed(body: bytes, secret: str = SIGNING_SECRET, *, at: float | None = None) -> dict[str, str]:
    stamp = str(int(time.time() if at is None else at))
    digest = hmac.new(secret.encode(), f"v0:{stamp}:".encode() + body, hashlib.sha256).hexdigest()
    return {
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": f"v0={digest}",
        "Content-Type": "application/x-www-form-urlencoded",
    }


def form(payload: dict[str, Any]) -> bytes:
    return urlencode({"payload": json.dumps(payload)}).encode()


def click(
    request_id: str,
    decision: str,
    user: str = "U-ALICE",
    *,
    channel: str = "D-ALICE",
    ts: str = "1700000000.000001",
) -> dict[str, Any]:
    """A `block_actions` payload: `user` clicked our `decision` button on the message `ts`."""
    return {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "team_id": "T1"},
        "api_app_id": "A1",
        "team": {"id": "T1", "domain": "example"},
        "container": {"type": "message", "message_ts": ts, "channel_id": channel, "is_ephemeral": False},
        "trigger_id": f"{next(_triggers)}.1.abcdef",
        "channel": {"id": channel, "name": "directmessage"},
        "message": {"type": "message", "ts": ts, "text": "AI wants to run: …"},
        "response_url": "https://hooks.slack.com/actions/T1/1/abc",
        "actions": [
            {
                "action_id": f"signoff.{decision}",
                "block_id": "signoff.actions",
                "value": request_id,
                "type": "button",
                "action_ts": f"{time.time():.6f}",
            }
        ],
    }


def submission(view: dict[str, Any], values: dict[str, str | None], user: str = "U-ALICE") -> dict[str, Any]:
    """A `view_submission` of the modal `view` (as `views.open` got it), with `values` typed
    into its inputs (block id → text; None as Slack sends an input left empty)."""
    state = {block: {"value": {"type": "plain_text_input", "value": text}} for block, text in values.items()}
    return {
        "type": "view_submission",
        "user": {"id": user, "username": user.lower(), "team_id": "T1"},
        "api_app_id": "A1",
        "team": {"id": "T1", "domain": "example"},
        "trigger_id": f"{next(_triggers)}.2.abcdef",
        "view": {
            "id": "V1",
            "type": "modal",
            "callback_id": view["callback_id"],
            "private_metadata": view.get("private_metadata", ""),
            "blocks": view.get("blocks", []),
            "state": {"values": state},
            "hash": "1.abc",
        },
    }


def input_blocks(view: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The modal's input blocks by block id."""
    return {block["block_id"]: block for block in view["blocks"] if block["type"] == "input"}
