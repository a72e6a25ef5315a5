"""What WeCom's and Feishu's servers do to a callback, written from their documentation for the
tests, apart from signoff's code: on pycryptodome (signoff's modules use `cryptography` and
lark-oapi), so a mistake shared by both sides cannot pass unnoticed."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import struct
import time
from typing import Any

from Crypto.Cipher import AES

# -- WeCom ------------------------------------------------------------------------------------


def wecom_key(encoding_aes_key: str) -> bytes:
    return base64.b64decode(encoding_aes_key + "=")


def wecom_encrypt(encoding_aes_key: str, corp_id: str, message: str | bytes) -> str:
    key = wecom_key(encoding_aes_key)
    text = message.encode() if isinstance(message, str) else message
    plain = os.urandom(16) + struct.pack("!I", len(text)) + text + corp_id.encode()
    pad = 32 - len(plain) % 32
    plain += bytes([pad]) * pad
    return base64.b64encode(AES.new(key, AES.MODE_CBC, key[:16]).encrypt(plain)).decode()


def wecom_decrypt(encoding_aes_key: str, encrypted: str) -> tuple[bytes, bytes]:
    """(message, corp_id)."""
    key = wecom_key(encoding_aes_key)
    plain = AES.new(key, AES.MODE_CBC, key[:16]).decrypt(base64.b64decode(encrypted))
    plain = plain[: -plain[-1]]
    length = struct.unpack("!I", plain[16:20])[0]
    return plain[20 : 20 + length], plain[20 + length :]


def wecom_signature(token: str, timestamp: str, nonce: str, encrypted: str) -> str:
    return hashlib.sha1("".join(sorted([token, timestamp, nonce, encrypted])).encode()).hexdigest()


def wecom_callback(
    *,
    token: str,
    encoding_aes_key: str,
    corp_id: str,
    message: str,
    timestamp: int | str | None = None,
    nonce: str = "nonce1",
) -> tuple[dict[str, str], bytes]:
    """(query, body) of a POST WeCom makes to a callback URL."""
    encrypted = wecom_encrypt(encoding_aes_key, corp_id, message)
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    query = {
        "msg_signature": wecom_signature(token, stamp, nonce, encrypted),
        "timestamp": stamp,
        "nonce": nonce,
    }
    body = (
        f"<xml><ToUserName><![CDATA[{corp_id}]]></ToUserName><AgentID><![CDATA[1000002]]></AgentID>"
        f"<Encrypt><![CDATA[{encrypted}]]></Encrypt></xml>"
    ).encode()
    return query, body


def card_event(
    *,
    user: str,
    key: str,
    corp_id: str,
    task_id: str = "task",
    code: str = "rc-click",
    created: int | None = None,
) -> str:
    """A `template_card_event` (a click on a button_interaction card's button), as WeCom sends it."""
    return (
        f"<xml><ToUserName><![CDATA[{corp_id}]]></ToUserName><FromUserName><![CDATA[{user}]]></FromUserName>"
        f"<CreateTime>{int(time.time()) if created is None else created}</CreateTime>"
        "<MsgType><![CDATA[event]]></MsgType>"
        "<Event><![CDATA[template_card_event]]></Event>"
        f"<EventKey><![CDATA[{key}]]></EventKey><TaskId><![CDATA[{task_id}]]></TaskId>"
        "<CardType><![CDATA[button_interaction]]></CardType>"
        f"<ResponseCode><![CDATA[{code}]]></ResponseCode><AgentID>1000002</AgentID></xml>"
    )


# -- Feishu -----------------------------------------------------------------------------------


def feishu_encrypt(encrypt_key: str, plaintext: str) -> str:
    key = hashlib.sha256(encrypt_key.encode()).digest()
    iv = os.urandom(16)
    data = plaintext.encode()
    pad = 16 - len(data) % 16
    data += bytes([pad]) * pad
    return base64.b64encode(iv + AES.new(key, AES.MODE_CBC, iv).encrypt(data)).decode()


def feishu_callback(
    *, encrypt_key: str, payload: dict[str, Any], timestamp: int | str | None = None, nonce: str = "n0nce"
) -> tuple[dict[str, str], bytes]:
    """(headers, body) of an encrypted, signed callback Feishu posts."""
    body = json.dumps({"encrypt": feishu_encrypt(encrypt_key, json.dumps(payload))}).encode()
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    signature = hashlib.sha256((stamp + nonce + encrypt_key).encode() + body).hexdigest()
    headers = {
        "content-type": "application/json",
        "x-lark-request-timestamp": stamp,
        "x-lark-request-nonce": nonce,
        "x-lark-signature": signature,
    }
    return headers, body


def card_action(
    *, token: str, open_id: str, value: Any, message_id: str = "om_1", event_id: str | None = None
) -> dict[str, Any]:
    """A `card.action.trigger` callback (schema 2.0), as Feishu documents it."""
    return {
        "schema": "2.0",
        "header": {
            "event_id": event_id or f"ev_{os.urandom(6).hex()}",
            "token": token,
            "create_time": str(int(time.time() * 1000)),
            "event_type": "card.action.trigger",
            "tenant_key": "tenant",
            "app_id": "cli_test",
        },
        "event": {
            "operator": {"tenant_key": "tenant", "open_id": open_id, "union_id": "on_1"},
            "token": "c-update-token",
            "action": {"value": value, "tag": "button"},
            "host": "im_message",
            "context": {"open_message_id": message_id, "open_chat_id": "oc_1"},
        },
    }


def url_verification(*, token: str, challenge: str) -> dict[str, Any]:
    return {"challenge": challenge, "token": token, "type": "url_verification"}
