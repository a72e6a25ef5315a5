"""The key that keeps the secrets of channels an admin adds (bot tokens, app secrets, SMTP
passwords): sealed with AES-256-GCM before they are stored, opened only by a server (or a local
CLI) that holds the same key.

Why encrypted, when a webhook's signing secret is kept as it is: these are credentials on
another system (a Slack bot token reads and posts in the workspace; an SMTP password sends mail
as the company), and copies of a database (backups, dumps, a replica, a file copied to debug)
travel further than a server's configuration. With the key outside the database, such a copy
reveals none of them. The cost: every replica needs the same key (`--secrets-key-file`, or the
key itself in `$SIGNOFF_SECRETS_KEY`), and a channel whose secrets the key cannot open is not
used (its messages are dead-lettered saying so) until its secrets are entered again.

A sealed value is `v1:<key id>:<base64 of nonce + ciphertext>`; the channel's name and the
setting's are the associated data, so a value moved to another channel or setting does not
open. The key id (the first 8 hex digits of the key's SHA-256) says which key sealed it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import secrets
from pathlib import Path
from typing import Any

from ..errors import ConfigError

KEY_ENV = "SIGNOFF_SECRETS_KEY"
"""The key itself (base64 of 32 bytes)."""
KEY_FILE_ENV = "SIGNOFF_SECRETS_KEY_FILE"
"""A file holding the key (what `signoff channels new-key` prints)."""
KEY_BYTES = 32
NONCE_BYTES = 12
VERSION = "v1"
NEW_KEY = "signoff channels new-key > FILE"
NO_KEY = (
    "this server has no key to keep channel secrets: start it with --secrets-key-file FILE "
    f"(make one with `{NEW_KEY}`) or set ${KEY_ENV}"
)


class SecretsKey:
    """A 32-byte key that seals and opens channel secrets; its repr never shows it."""

    __slots__ = ("_key", "id")

    def __init__(self, key: bytes) -> None:
        if len(key) != KEY_BYTES:
            raise ConfigError(f"a secrets key is {KEY_BYTES} bytes in base64 (make one with `{NEW_KEY}`)")
        self._key = key
        self.id = hashlib.sha256(key).hexdigest()[:8]

    @classmethod
    def generate(cls) -> SecretsKey:
        return cls(secrets.token_bytes(KEY_BYTES))

    @classmethod
    def from_text(cls, text: str, *, where: str = "the secrets key") -> SecretsKey:
        try:
            standard = text.strip().replace("-", "+").replace("_", "/")  # url-safe or not
            key = base64.b64decode(standard, validate=True)
        except (binascii.Error, ValueError):
            raise ConfigError(
                f"{where} is not base64 of {KEY_BYTES} bytes (make one with `{NEW_KEY}`)"
            ) from None
        if len(key) != KEY_BYTES:
            raise ConfigError(f"{where} is {len(key)} bytes, not {KEY_BYTES} (make one with `{NEW_KEY}`)")
        return cls(key)

    @classmethod
    def from_file(cls, path: str | Path) -> SecretsKey:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read the secrets key file {path}: {exc.strerror or exc}") from None
        return cls.from_text(text, where=f"the secrets key file {path}")

    @property
    def text(self) -> str:
        """The key as a file keeps it (url-safe base64)."""
        return base64.urlsafe_b64encode(self._key).decode()

    def seal(self, channel: str, setting: str, value: str) -> str:
        nonce = os.urandom(NONCE_BYTES)
        sealed = _aes(self._key).encrypt(nonce, value.encode(), _context(channel, setting))
        return f"{VERSION}:{self.id}:{base64.b64encode(nonce + sealed).decode()}"

    def open(self, channel: str, setting: str, sealed: str) -> str:
        """The value `seal` sealed, or ConfigError saying why it cannot be opened."""
        version, _, rest = sealed.partition(":")
        key_id, _, payload = rest.partition(":")
        if version != VERSION or not payload:
            raise ConfigError(f"channel {channel!r}: its {setting} is not a sealed secret")
        if key_id != self.id:
            raise ConfigError(
                f"channel {channel!r}: its {setting} was sealed with another secrets key ({key_id}; "
                f"this one is {self.id}): enter it again"
            )
        aes = _aes(self._key)
        from cryptography.exceptions import InvalidTag

        try:
            raw = base64.b64decode(payload, validate=True)
            value = aes.decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], _context(channel, setting))
        except (binascii.Error, ValueError, InvalidTag):
            raise ConfigError(f"channel {channel!r}: its {setting} does not open with this key") from None
        return bytes(value).decode()

    def __repr__(self) -> str:
        return f"SecretsKey(id={self.id!r})"

    __str__ = __repr__


def key_from_env(environ: dict[str, str] | None = None) -> SecretsKey | None:
    """The key `$SIGNOFF_SECRETS_KEY` holds, else the one in the file `$SIGNOFF_SECRETS_KEY_FILE`
    names, else None."""
    env = os.environ if environ is None else environ
    if env.get(KEY_ENV):
        return SecretsKey.from_text(env[KEY_ENV], where=f"${KEY_ENV}")
    if env.get(KEY_FILE_ENV):
        return SecretsKey.from_file(env[KEY_FILE_ENV])
    return None


def _context(channel: str, setting: str) -> bytes:
    return f"signoff channel {channel} {setting}".encode()


def _aes(key: bytes) -> Any:
    try:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError:
        raise ConfigError(
            "keeping channel secrets needs the cryptography package (it comes with the channel "
            "extras: pip install 'signoff[slack]', …)"
        ) from None
    return AESGCM(key)
