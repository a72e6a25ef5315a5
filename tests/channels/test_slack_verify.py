"""Slack's callbacks checked before anything in them is read: the v0 signature (our test signer
agrees with slack_sdk's `SignatureVerifier`), the 5-minute window, and payloads that cannot be
read; then what a verified payload says, as an `Inbound`."""

from __future__ import annotations

import json
import time

import pytest
from slack_sdk.signature import SignatureVerifier

from signoff.channels import BadCallback, BadSignature
from signoff.channels.slack import SlackChannel

from .slack_signing import SIGNING_SECRET, click, form, signed, submission


@pytest.fixture
def slack() -> SlackChannel:
    return SlackChannel(bot_token="xoxb-1", signing_secret=SIGNING_SECRET)


def test_our_signer_is_slacks_scheme() -> None:
    body = form(click("r1", "approve"))
    assert SignatureVerifier(SIGNING_SECRET).is_valid_request(body, signed(body))
    assert not SignatureVerifier("another").is_valid_request(body, signed(body))


def test_a_signed_click_is_a_decision_by_the_clicker(slack: SlackChannel) -> None:
    payload = click("r1", "approve", "U7", channel="D7", ts="17.1")
    body = form(payload)
    inbound = slack.verify(body, {k.lower(): v for k, v in signed(body).items()})
    assert inbound.kind == "decide"
    assert (inbound.sender, inbound.request_id, inbound.decision) == ("U7", "r1", {"type": "approve"})
    assert inbound.delivery_id == "slack:" + payload["trigger_id"]
    assert (inbound.extra["slack_channel"], inbound.extra["ts"]) == ("D7", "17.1")


@pytest.mark.parametrize("decision", ["edit", "reject", "respond"])
def test_edit_reject_and_answer_clicks_ask_for_a_modal(slack: SlackChannel, decision: str) -> None:
    body = form(click("r1", decision))
    inbound = slack.verify(body, signed(body))
    assert inbound.kind == "reply" and inbound.extra["open"] == decision
    assert inbound.request_id == "r1" and inbound.extra["trigger_id"]


def test_a_submitted_reject_decides_with_its_reason(slack: SlackChannel) -> None:
    view = {
        "callback_id": "signoff.reject",
        "private_metadata": json.dumps({"request_id": "r1", "channel": "D1", "ts": "1.2"}),
    }
    body = form(submission(view, {"message": "  not today  "}))
    inbound = slack.verify(body, signed(body))
    assert inbound.decision == {"type": "reject", "message": "not today"}
    empty = form(submission(view, {"message": None}))
    assert slack.verify(empty, signed(empty)).decision == {"type": "reject"}


def test_a_wrong_signature_a_stale_or_missing_timestamp_are_refused(slack: SlackChannel) -> None:
    body = form(click("r1", "approve"))
    with pytest.raises(BadSignature, match="does not verify"):
        slack.verify(body, signed(body, "wrong-secret"))
    with pytest.raises(BadSignature, match="does not verify"):
        slack.verify(body + b"x", signed(body))
    with pytest.raises(BadSignature, match="window is 5 minutes"):
        slack.verify(body, signed(body, at=time.time() - 301))
    with pytest.raises(BadSignature, match="window is 5 minutes"):
        slack.verify(body, signed(body, at=time.time() + 400))
    assert slack.verify(body, signed(body, at=time.time() - 250)).kind == "decide"
    with pytest.raises(BadSignature, match="no X-Slack-Signature"):
        slack.verify(body, {})
    with pytest.raises(BadSignature, match="not a number"):
        slack.verify(body, {**signed(body), "X-Slack-Request-Timestamp": "soon"})


def test_unreadable_payloads_are_bad_callbacks(slack: SlackChannel) -> None:
    for body, why in [
        (b"payload=%7Bnot+json", "not JSON"),
        (b"payload=%5B1%5D", "not a JSON object"),
        (b"just some text", "not a URL-encoded form"),
    ]:
        with pytest.raises(BadCallback, match=why):
            slack.verify(body, signed(body))


def test_what_is_not_ours_gets_a_clear_ephemeral(slack: SlackChannel) -> None:
    command = b"command=%2Fsignoff&text=hi&user_id=U1"
    for body in (command, form({"type": "shortcut", "user": {"id": "U1"}}), form(click("r1", "dance"))):
        inbound = slack.verify(body, signed(body))
        assert inbound.kind == "reply"
        assert inbound.reply["response_type"] == "ephemeral"
        assert "only answers its own request buttons" in inbound.reply["text"]
    link = form({**click("r1", "approve"), "actions": [{"action_id": "signoff.open", "type": "button"}]})
    assert slack.verify(link, signed(link)).reply is None
