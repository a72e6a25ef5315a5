"""The servers a client talks to: one signoff server, or the replicas of one (each holds the whole
state, on one database, so any of them answers any call).

A client uses one at a time. When a call to it fails in a way worth retrying (no connection, a
timeout, 502, 503, 504), the client moves on to the next, in order and round again, keeping the
call's idempotency key, so a write the failed replica applied is answered, not applied again, by
the next; its event stream resumes there by `Last-Event-ID` (the audit sequence every replica
shares). It stays with the server that answers.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from urllib.parse import urlsplit

from ..errors import ConfigError


def server_urls(urls: str | Sequence[str]) -> tuple[str, ...]:
    """`urls` as a tuple of base URLs: a list, or one string with several separated by commas
    (as `$SIGNOFF_URL` may hold them); each without its trailing slash, duplicates dropped."""
    listed = urls.split(",") if isinstance(urls, str) else list(urls)
    found = tuple(dict.fromkeys(url.strip().rstrip("/") for url in listed if url.strip()))
    if not found:
        raise ConfigError("a client needs the URL of at least one signoff server")
    for url in found:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(f"{url!r} is not a server's URL (http://host:port or https://host)")
    return found


class Servers:
    def __init__(self, urls: str | Sequence[str]) -> None:
        self.urls = server_urls(urls)
        self._current = 0
        self._lock = threading.Lock()

    @property
    def current(self) -> str:
        return self.urls[self._current]

    def __len__(self) -> int:
        return len(self.urls)

    def failed(self, url: str) -> None:
        """A call to `url` failed: the next server is tried next (unless another call moved on
        already)."""
        with self._lock:
            if self.urls[self._current] == url:
                self._current = (self._current + 1) % len(self.urls)

    def __repr__(self) -> str:
        return repr(self.urls[0]) if len(self.urls) == 1 else repr(list(self.urls))
