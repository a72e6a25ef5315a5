"""WeCom's (企业微信) callback crypto, written on `cryptography` because no maintained SDK does
it (wechatpy 2.0 is a pre-release):

- the signature: `msg_signature = sha1(''.join(sorted([token, timestamp, nonce, encrypted])))`,
  sent in the query string with `timestamp` and `nonce`;
- the body: AES-256-CBC with `key = b64decode(EncodingAESKey + "=")`, `IV = key[:16]`, PKCS#7
  padding to 32-byte blocks, of `16 random bytes + 4-byte big-endian length + message + corp_id`,
  base64-encoded (the `<Encrypt>` of the XML body, or the URL check's `echostr`);
- passive replies: the same encryption, in `<xml><Encrypt/><MsgSignature/><TimeStamp/><Nonce/>`.

Untrusted XML is read with `defusedxml` (no entities, no external references).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import struct
from xml.sax.saxutils import escape

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from defusedxml import ElementTree
from defusedxml.common import DefusedXmlException

from ..errors import ConfigError
from .contract import BadCallback, BadSignature

BLOCK_BITS = 256
"""WeCom pads to 32-byte blocks (PKCS#7 with a block size of 32), not AES's 16."""


def signature(token: str, timestamp: str, nonce: str, encrypted: str) -> str:
    return hashlib.sha1("".join(sorted([token, timestamp, nonce, encrypted])).encode()).hexdigest()


class WeComCrypto:
    """One WeCom app's callback settings: its Token, EncodingAESKey and the corp's id."""

    def __init__(self, *, token: str, encoding_aes_key: str, corp_id: str) -> None:
        if len(encoding_aes_key) != 43:
            raise ConfigError("the WeCom EncodingAESKey must be 43 characters")
        try:
            self._key = base64.b64decode(encoding_aes_key + "=", validate=True)
        except binascii.Error:
            raise ConfigError("the WeCom EncodingAESKey is not base64") from None
        self._token = token
        self.corp_id = corp_id

    def check(
        self, msg_signature: str | None, timestamp: str | None, nonce: str | None, encrypted: str
    ) -> None:
        """Raise `BadSignature` unless `msg_signature` signs these values."""
        if not msg_signature or timestamp is None or nonce is None:
            raise BadSignature("the WeCom callback has no msg_signature, timestamp or nonce")
        expected = signature(self._token, timestamp, nonce, encrypted)
        if not hmac.compare_digest(expected, msg_signature.lower()):
            raise BadSignature("the WeCom msg_signature does not verify")

    def decrypt(self, encrypted: str) -> bytes:
        """The message inside `encrypted`; `BadSignature` if it was made for another corp."""
        try:
            data = base64.b64decode(encrypted, validate=True)
            decryptor = self._cipher().decryptor()
            padded = decryptor.update(data) + decryptor.finalize()
            unpadder = padding.PKCS7(BLOCK_BITS).unpadder()
            plain = unpadder.update(padded) + unpadder.finalize()
            (length,) = struct.unpack(">I", plain[16:20])
        except (binascii.Error, ValueError, struct.error):
            raise BadCallback("the WeCom message cannot be decrypted") from None
        message, corp_id = plain[20 : 20 + length], plain[20 + length :]
        if len(message) != length:
            raise BadCallback("the WeCom message is shorter than it says")
        if not hmac.compare_digest(corp_id, self.corp_id.encode()):
            raise BadSignature("the WeCom message is for another corp id")
        return message

    def encrypt(self, message: bytes, *, random: bytes | None = None) -> str:
        prefix = random if random is not None else os.urandom(16)
        plain = prefix + struct.pack(">I", len(message)) + message + self.corp_id.encode()
        padder = padding.PKCS7(BLOCK_BITS).padder()
        padded = padder.update(plain) + padder.finalize()
        encryptor = self._cipher().encryptor()
        return base64.b64encode(encryptor.update(padded) + encryptor.finalize()).decode()

    def reply(self, message: str, *, timestamp: str, nonce: str) -> str:
        """A passive reply: `message` (an XML reply) encrypted and signed as WeCom expects it."""
        encrypted = self.encrypt(message.encode())
        signed = signature(self._token, timestamp, nonce, encrypted)
        return (
            f"<xml><Encrypt><![CDATA[{encrypted}]]></Encrypt>"
            f"<MsgSignature><![CDATA[{signed}]]></MsgSignature>"
            f"<TimeStamp>{escape(timestamp)}</TimeStamp><Nonce>{cdata(nonce)}</Nonce></xml>"
        )

    def _cipher(self) -> Cipher[modes.CBC]:
        return Cipher(algorithms.AES(self._key), modes.CBC(self._key[:16]))


def read_xml(body: bytes) -> dict[str, str]:
    """The child elements of an `<xml>` document as text (nested ones flattened by tag)."""
    try:
        root = ElementTree.fromstring(body)
    except (ElementTree.ParseError, DefusedXmlException, ValueError):
        raise BadCallback("the WeCom body is not readable XML") from None
    fields: dict[str, str] = {}
    for element in root.iter():
        if element is not root and len(element) == 0:
            fields.setdefault(element.tag, (element.text or "").strip())
    return fields


def cdata(text: str) -> str:
    """`text` inside CDATA, with any `]]>` in it split so that it cannot close the section."""
    return "<![CDATA[" + text.replace("]]>", "]]]]><![CDATA[>") + "]]>"
