"""The provider's signing keys (its JWKS), kept until a token names a key they lack: then read
once more (the provider rotated its keys), and a key still missing refuses the token."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from joserfc.jwk import KeySet


class ProviderKeys:
    def __init__(self, fetch: Callable[[], dict[str, Any]]) -> None:
        """`fetch`: reads the provider's JWKS document."""
        self._fetch = fetch
        self._keys: KeySet | None = None
        self._lock = threading.Lock()
        self.fetches = 0

    def key_set_for(self, kid: str | None) -> KeySet:
        """The keys, read again once if none of them is `kid`."""
        with self._lock:
            if self._keys is None or not _has(self._keys, kid):
                self._keys = self._read()
            return self._keys

    def _read(self) -> KeySet:
        from joserfc.jwk import KeySet

        self.fetches += 1
        document = self._fetch()
        keys = document.get("keys") if isinstance(document, dict) else None
        usable = [key for key in keys or [] if isinstance(key, dict) and key.get("use", "sig") == "sig"]
        return KeySet.import_key_set({"keys": usable})


def _has(keys: KeySet, kid: str | None) -> bool:
    from joserfc.errors import InvalidKeyIdError

    if kid is None:
        return bool(keys.keys)
    try:
        keys.get_by_kid(kid)
    except InvalidKeyIdError:
        return False
    return True
