"""WeCom callbacks as WeCom makes them (signed and encrypted by the tests' own encryptor, on
pycryptodome): the URL check, a click on a card's button, and every way a forged, stale,
tampered or foreign callback is refused; the encrypted passive reply decrypts and verifies."""

from __future__ import annotations

import time

import pytest

from signoff.channels import BadCallback, BadSignature, InboundOutcome
from signoff.channels.wecom import WeComChannel
from signoff.channels.wecom_crypto import WeComCrypto, read_xml
from signoff.errors import ConfigError

from .signers import card_event, wecom_callback, wecom_decrypt, wecom_encrypt, wecom_signature

AES_KEY = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"
CORP = "wwcorp"
TOKEN = "cb-token"


@pytest.fixture
def wecom() -> WeComChannel:
    return WeComChannel(
        "wecom",
        corp_id=CORP,
        corp_secret="s",
        agent_id=1000002,
        token=TOKEN,
        encoding_aes_key=AES_KEY,
        base_url="http://127.0.0.1:9",
    )


def click(key: str = "so1|approve|req_1", **kwargs: object) -> tuple[dict[str, str], bytes]:
    message = card_event(user="zhangsan", key=key, corp_id=CORP)
    return wecom_callback(token=TOKEN, encoding_aes_key=AES_KEY, corp_id=CORP, message=message, **kwargs)  # type: ignore[arg-type]


def test_the_url_check_answers_the_decrypted_echostr(wecom: WeComChannel) -> None:
    echostr = wecom_encrypt(AES_KEY, CORP, "1616140317555161061")
    stamp = str(int(time.time()))
    query = {
        "msg_signature": wecom_signature(TOKEN, stamp, "n1", echostr),
        "timestamp": stamp,
        "nonce": "n1",
        "echostr": echostr,
    }
    inbound = wecom.verify(b"", {}, query)
    assert inbound.kind == "reply"
    assert wecom.answer(inbound, None) == (200, "1616140317555161061")
    with pytest.raises(BadSignature):
        wecom.verify(b"", {}, {**query, "msg_signature": "0" * 40})


def test_a_click_is_a_decision_by_the_clicking_user(wecom: WeComChannel) -> None:
    query, body = click()
    inbound = wecom.verify(body, {"content-type": "text/xml"}, query)
    assert inbound.kind == "decide"
    assert inbound.sender == "zhangsan"
    assert inbound.request_id == "req_1"
    assert inbound.handle is None
    assert inbound.decision == {"type": "approve"}
    assert inbound.delivery_id
    assert inbound.extra["response_code"] == "rc-click"
    query, body = click("so1|reject|req_1")
    assert wecom.verify(body, {}, query).decision == {"type": "reject"}


def test_same_callback_twice_has_the_same_delivery_id(wecom: WeComChannel) -> None:
    query, body = click()
    assert wecom.verify(body, {}, query).delivery_id == wecom.verify(body, {}, query).delivery_id


@pytest.mark.parametrize(
    "key", ["", "approve", "so1|edit|req_1", "so1|approve|", "other|approve|req_1", "so1|approve|req|x"]
)
def test_keys_that_are_not_signoffs_decide_nothing(wecom: WeComChannel, key: str) -> None:
    query, body = click(key)
    inbound = wecom.verify(body, {}, query)
    assert inbound.kind == "reply"
    assert wecom.answer(inbound, None) == (200, "")


def test_other_messages_are_acknowledged_and_ignored(wecom: WeComChannel) -> None:
    text = (
        f"<xml><ToUserName><![CDATA[{CORP}]]></ToUserName><FromUserName><![CDATA[zhangsan]]></FromUserName>"
        "<CreateTime>1</CreateTime><MsgType><![CDATA[text]]></MsgType><Content><![CDATA[1]]></Content></xml>"
    )
    query, body = wecom_callback(token=TOKEN, encoding_aes_key=AES_KEY, corp_id=CORP, message=text)
    assert wecom.verify(body, {}, query).kind == "reply"


def test_forged_callbacks_are_bad_signatures(wecom: WeComChannel) -> None:
    query, body = click()
    with pytest.raises(BadSignature, match="does not verify"):
        wecom.verify(body, {}, {**query, "msg_signature": "f" * 40})
    with pytest.raises(BadSignature, match="no msg_signature"):
        wecom.verify(body, {}, {})
    with pytest.raises(BadCallback, match="/channels/wecom/wecom"):
        wecom.verify(body, {})  # the shared route, which has no query string to give
    tampered = body.replace(b"<Encrypt><![CDATA[", b"<Encrypt><![CDATA[A")
    with pytest.raises(BadSignature):
        wecom.verify(tampered, {}, query)
    wrong_token = wecom_callback(
        token="other",
        encoding_aes_key=AES_KEY,
        corp_id=CORP,
        message=card_event(user="u", key="k", corp_id=CORP),
    )
    with pytest.raises(BadSignature):
        wecom.verify(wrong_token[1], {}, wrong_token[0])


def test_a_message_for_another_corp_is_refused(wecom: WeComChannel) -> None:
    query, body = wecom_callback(
        token=TOKEN,
        encoding_aes_key=AES_KEY,
        corp_id="wwother",
        message=card_event(user="zhangsan", key="so1|approve|req_1", corp_id="wwother"),
    )
    with pytest.raises(BadSignature, match="another corp"):
        wecom.verify(body, {}, query)


@pytest.mark.parametrize("offset", [-301, 301, -3600])
def test_stale_or_future_timestamps_are_refused(wecom: WeComChannel, offset: int) -> None:
    query, body = click(timestamp=int(time.time()) + offset)
    with pytest.raises(BadSignature, match="away from now"):
        wecom.verify(body, {}, query)


def test_unreadable_bodies_are_bad_callbacks(wecom: WeComChannel) -> None:
    stamp = str(int(time.time()))
    with pytest.raises(BadCallback):
        wecom.verify(b"not xml", {}, {"msg_signature": "x", "timestamp": stamp, "nonce": "n"})
    with pytest.raises(BadCallback, match="no Encrypt"):
        wecom.verify(b"<xml><ToUserName>x</ToUserName></xml>", {}, {"timestamp": stamp})
    bomb = b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><xml><Encrypt>&a;</Encrypt></xml>'
    with pytest.raises(BadCallback):
        wecom.verify(bomb, {}, {"msg_signature": "x", "timestamp": stamp, "nonce": "n"})
    garbage = "QUJD"  # base64 of 3 bytes: not a whole AES block
    signed = {"msg_signature": wecom_signature(TOKEN, stamp, "n", garbage), "timestamp": stamp, "nonce": "n"}
    with pytest.raises(BadCallback, match="cannot be decrypted"):
        wecom.verify(f"<xml><Encrypt>{garbage}</Encrypt></xml>".encode(), {}, signed)


def test_a_refusal_is_an_encrypted_passive_reply(wecom: WeComChannel) -> None:
    query, body = click()
    inbound = wecom.verify(body, {}, query)
    assert wecom.answer(inbound, InboundOutcome(result="decided", message="Approved.")) == (200, "")
    status, reply = wecom.answer(
        inbound, InboundOutcome(result="refused", message="You are not an approver of this request.")
    )
    assert status == 200
    envelope = read_xml(reply.encode())
    assert envelope["MsgSignature"] == wecom_signature(
        TOKEN, envelope["TimeStamp"], envelope["Nonce"], envelope["Encrypt"]
    )
    assert envelope["TimeStamp"] == query["timestamp"] and envelope["Nonce"] == query["nonce"]
    message, corp = wecom_decrypt(AES_KEY, envelope["Encrypt"])
    assert corp == CORP.encode()
    inner = read_xml(message)
    assert inner["ToUserName"] == "zhangsan"
    assert inner["FromUserName"] == CORP
    assert inner["MsgType"] == "text"
    assert inner["Content"] == "You are not an approver of this request."


def test_the_crypto_round_trips_with_an_independent_implementation() -> None:
    crypto = WeComCrypto(token=TOKEN, encoding_aes_key=AES_KEY, corp_id=CORP)
    for message in ["", "x", "中文 " * 40, "a" * 32, "a" * 31]:
        assert crypto.decrypt(wecom_encrypt(AES_KEY, CORP, message)) == message.encode()
        assert wecom_decrypt(AES_KEY, crypto.encrypt(message.encode())) == (message.encode(), CORP.encode())


def test_an_encoding_aes_key_must_be_43_base64_characters() -> None:
    with pytest.raises(ConfigError, match="43"):
        WeComCrypto(token="t", encoding_aes_key="short", corp_id="c")
    with pytest.raises(ConfigError, match="base64"):
        WeComCrypto(token="t", encoding_aes_key="!" * 43, corp_id="c")
