"""Slowing failed sign-ins down, per source address (DESIGN §8; issue 17).

Every credential the server checks for a caller that turns out unknown, expired, used or
revoked (an API token, a web session, a one-time login link, a handle link) counts against the
address it came from. After `failures` of them within `window` seconds, sign-ins from that
address get 429 with `Retry-After` until the oldest of those failures is older than the window:
before any credential is looked at, a valid one too, so that guessing gets no faster by mixing
in a good one. Successes count for nothing. A refusal spell is audited at most once a window
per address (`auth.limited`). The count is kept per server process; behind a proxy, trust it
with `--forwarded-allow-ips` so that addresses are the clients', not the proxy's.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from fastapi import Request as HttpRequest

from .._util import format_span
from ..errors import ConfigError, TooManySignIns
from ..store import Store

LIMITED = "auth.limited"
MAX_SOURCES = 10_000
OTHER_SOURCES = "*"
"""Where failures are counted once `MAX_SOURCES` addresses have failed within a window."""


@dataclass(frozen=True)
class SignInLimit:
    failures: int = 20
    """Failed sign-ins an address may make within `window`; the next sign-in is refused."""
    window: float = 60.0
    """Seconds."""
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)
    """Seconds from any fixed point (tests move their own)."""

    def __post_init__(self) -> None:
        if self.failures < 1:
            raise ConfigError(f"failed sign-ins allowed must be at least 1, not {self.failures}")
        if not self.window > 0:
            raise ConfigError(f"the failed sign-in window must be positive, not {self.window}")


@dataclass(frozen=True)
class Limited:
    """A sign-in refused for its address's failures."""

    source: str
    retry_after: int
    """Whole seconds until the address may try again."""
    audit: bool
    """The first refusal of the address in a window: to be written to the audit log."""

    def error(self, *, audited: bool = True) -> TooManySignIns:
        """The refusal; marked audited, for its entry is written here (`write`) once a window."""
        refused = TooManySignIns(
            f"too many failed sign-ins from {self.source}; try again in {format_span(self.retry_after)}",
            retry_after=self.retry_after,
        )
        refused.audited = audited
        return refused

    def write(self, store: Store, limit: SignInLimit, *, channel: str) -> None:
        from .refusals import ANONYMOUS, audit_refusal

        data = {"source": self.source, "failures": limit.failures, "window": limit.window}
        refused = self.error(audited=False)
        audit_refusal(store, refused, actor=ANONYMOUS, channel=channel, action=LIMITED, data=data)


class SignInLimiter:
    """The recent failed sign-ins of each address. Thread-safe."""

    def __init__(self, limit: SignInLimit | None = None, *, max_sources: int = MAX_SOURCES) -> None:
        self.limit = limit or SignInLimit()
        self.max_sources = max_sources
        self._failures: dict[str, deque[float]] = {}
        self._audited: dict[str, float] = {}
        self._lock = threading.Lock()

    def check(self, source: str) -> Limited | None:
        """None if `source` may sign in now; else why not, and for how long."""
        now = self.limit.clock()
        with self._lock:
            key = source
            if source not in self._failures and len(self._failures) >= self.max_sources:
                key = OTHER_SOURCES  # the table is full: it may be one of the many counted together
            times = self._failures.get(key)
            if times is None or len(times) < self.limit.failures:
                return None
            until = times[0] + self.limit.window
            if now >= until:
                return None
            audit = now >= self._audited.get(key, -math.inf) + self.limit.window
            if audit:
                self._audited[key] = now
        return Limited(source, max(1, math.ceil(until - now)), audit)

    def failed(self, source: str) -> None:
        """Count one failed sign-in from `source`."""
        now = self.limit.clock()
        with self._lock:
            if source not in self._failures and len(self._failures) >= self.max_sources:
                self._forget_quiet(now)
                if len(self._failures) >= self.max_sources:
                    source = OTHER_SOURCES
            times = self._failures.get(source)
            if times is None:
                times = self._failures[source] = deque(maxlen=self.limit.failures)
            times.append(now)

    def _forget_quiet(self, now: float) -> None:
        for source, times in list(self._failures.items()):
            if times[-1] + self.limit.window <= now:
                del self._failures[source]
                self._audited.pop(source, None)


def source_of(http: HttpRequest) -> str:
    """The address a request came from (a trusted proxy's client: `--forwarded-allow-ips`)."""
    return http.client.host if http.client is not None else "unknown"
