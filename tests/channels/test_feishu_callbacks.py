"""Feishu callbacks as Feishu makes them (encrypted and signed by the tests' own code, which
lark-oapi's stock dispatcher accepts too): a click on a card button, the URL check, and forged,
stale, mis-tokened and unreadable callbacks refused, as 401 or 400 rather than the
dispatcher's 500."""

from __future__ import annotations

import hashlib
import json
import time

import lark_oapi as lark
import pytest
from lark_oapi.core.model import RawRequest
from lark_oapi.event.callback.model.p2_card_action_trigger import (
    P2CardActionTrigger,
    P2CardActionTriggerResponse,
)

from signoff.channels import BadCallback, BadSignature, InboundOutcome
from signoff.channels.feishu import FeishuChannel

from .signers import card_action, feishu_callback, url_verification

KEY = "encrypt-key"
TOKEN = "verification-token"
VALUE = {"signoff": "so1", "decision": "approve", "request_id": "req_1"}


@pytest.fixture
def feishu() -> FeishuChannel:
    return FeishuChannel(
        "feishu",
        app_id="cli_callbacks",
        app_secret="s",
        encrypt_key=KEY,
        verification_token=TOKEN,
        base_url="http://127.0.0.1:9",
    )


def click(value: object = VALUE, **kwargs: object) -> tuple[dict[str, str], bytes]:
    payload = card_action(token=TOKEN, open_id="ou_alice", value=value, event_id="ev_1")
    return feishu_callback(encrypt_key=KEY, payload=payload, **kwargs)  # type: ignore[arg-type]


def test_the_tests_callbacks_are_what_lark_oapi_accepts() -> None:
    seen: list[P2CardActionTrigger] = []

    def on_click(event: P2CardActionTrigger) -> P2CardActionTriggerResponse:
        seen.append(event)
        return P2CardActionTriggerResponse({})

    stock = lark.EventDispatcherHandler.builder(KEY, TOKEN).register_p2_card_action_trigger(on_click).build()
    headers, body = click()
    raw = RawRequest()
    raw.body = body
    raw.headers = {
        "X-Lark-Request-Timestamp": headers["x-lark-request-timestamp"],
        "X-Lark-Request-Nonce": headers["x-lark-request-nonce"],
        "X-Lark-Signature": headers["x-lark-signature"],
    }
    assert stock.do(raw).status_code == 200
    assert seen[0].event.operator.open_id == "ou_alice"
    assert seen[0].event.action.value == VALUE


def test_a_click_is_a_decision_by_the_clicking_user(feishu: FeishuChannel) -> None:
    headers, body = click()
    inbound = feishu.verify(body, headers)
    assert inbound.kind == "decide"
    assert inbound.sender == "ou_alice"
    assert inbound.request_id == "req_1"
    assert inbound.decision == {"type": "approve"}
    assert inbound.delivery_id == "ev_1"
    assert inbound.extra["message_id"] == "om_1"
    headers, body = click({**VALUE, "decision": "reject"})
    rejected = feishu.verify(body, headers)
    assert rejected.decision == {"type": "reject"}


def test_the_answer_is_a_toast(feishu: FeishuChannel) -> None:
    headers, body = click()
    inbound = feishu.verify(body, headers)
    assert feishu.answer(inbound, InboundOutcome(result="decided", message="Approved.")) == (
        200,
        {"toast": {"type": "success", "content": "Approved."}},
    )
    refused = InboundOutcome(result="refused", message="You are not an approver of this request.")
    assert feishu.answer(inbound, refused)[1]["toast"]["type"] == "error"


def test_the_url_check_answers_its_challenge(feishu: FeishuChannel) -> None:
    _, body = feishu_callback(encrypt_key=KEY, payload=url_verification(token=TOKEN, challenge="ch-42"))
    inbound = feishu.verify(body, {})  # Feishu does not sign the URL check; its token is checked
    assert inbound.kind == "reply"
    assert feishu.answer(inbound, None) == (200, {"challenge": "ch-42"})
    _, forged = feishu_callback(encrypt_key=KEY, payload=url_verification(token="guess", challenge="ch"))
    with pytest.raises(BadSignature):
        feishu.verify(forged, {})


@pytest.mark.parametrize("value", [None, {}, {"decision": "approve"}, {**VALUE, "decision": "edit"}])
def test_values_that_are_not_signoffs_decide_nothing(feishu: FeishuChannel, value: object) -> None:
    headers, body = click(value)
    assert feishu.verify(body, headers).kind == "reply"


def test_a_string_value_is_unreadable_to_lark_oapi(feishu: FeishuChannel) -> None:
    headers, body = click("approve")  # lark-oapi's model wants an object; signoff's buttons send one
    with pytest.raises(BadCallback):
        feishu.verify(body, headers)


def test_forged_callbacks_are_bad_signatures(feishu: FeishuChannel) -> None:
    headers, body = click()
    with pytest.raises(BadSignature):
        feishu.verify(body, {**headers, "x-lark-signature": "0" * 64})
    with pytest.raises(BadSignature):
        feishu.verify(body, {"content-type": "application/json"})
    with pytest.raises(BadSignature):
        feishu.verify(body, {**headers, "x-lark-request-nonce": "other"})
    tampered = json.dumps({"encrypt": "A" + json.loads(body)["encrypt"][1:]}).encode()
    with pytest.raises(BadSignature):
        feishu.verify(tampered, headers)
    other_key = feishu_callback(
        encrypt_key="other-key", payload=card_action(token=TOKEN, open_id="ou", value=VALUE)
    )
    with pytest.raises(BadSignature):
        feishu.verify(other_key[1], other_key[0])
    other_token = feishu_callback(
        encrypt_key=KEY, payload=card_action(token="other", open_id="ou", value=VALUE)
    )
    with pytest.raises(BadSignature):
        feishu.verify(other_token[1], other_token[0])


@pytest.mark.parametrize("offset", [-301, 301, -86400])
def test_stale_or_future_timestamps_are_refused(feishu: FeishuChannel, offset: int) -> None:
    headers, body = click(timestamp=int(time.time()) + offset)
    with pytest.raises(BadSignature, match="away from now"):
        feishu.verify(body, headers)


def test_a_signed_body_that_cannot_be_read_is_a_bad_callback(feishu: FeishuChannel) -> None:
    stamp, nonce = str(int(time.time())), "n"
    for body in [b"not json", b'{"encrypt": "bm90IGFlcw=="}']:
        signature = hashlib.sha256((stamp + nonce + KEY).encode() + body).hexdigest()
        headers = {
            "x-lark-request-timestamp": stamp,
            "x-lark-request-nonce": nonce,
            "x-lark-signature": signature,
        }
        with pytest.raises(BadCallback):
            feishu.verify(body, headers)


def test_other_events_are_acknowledged_and_ignored(feishu: FeishuChannel) -> None:
    payload = card_action(token=TOKEN, open_id="ou_alice", value=VALUE)
    payload["header"]["event_type"] = "im.message.receive_v1"
    headers, body = feishu_callback(encrypt_key=KEY, payload=payload)
    inbound = feishu.verify(body, headers)
    assert inbound.kind == "reply"
