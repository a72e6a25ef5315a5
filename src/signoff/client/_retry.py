"""Riding out a server's transient trouble, without I/O: which failures are worth another
attempt, how long to wait before it, and when to give up.

Transient: the connection could not be made or broke, the call timed out, or the server (or a
proxy in front of it) answered 502, 503 (`StoreUnavailable`) or 504. Nothing else is retried.
A call is retried with backoff until its patience runs out: the gate's (`signoff.waiting.
patience`, the request's deadline), else the client's `retry_for` seconds; then it raises
`ServerUnavailable`. Writes carry an `Idempotency-Key`, the same on every attempt of one call,
so a server that honours it answers a retry whose first attempt was applied with the first
answer instead of doing it again.
"""

from __future__ import annotations

import logging
import random
import time
import uuid
from typing import Any

import httpx

from .._util import utcnow
from ..errors import ServerUnavailable, SignoffError
from ..waiting import current_patience
from ._wire import Call

log = logging.getLogger("signoff.client")

TRANSIENT_STATUSES = frozenset({502, 503, 504})
IDEMPOTENCY_HEADER = "Idempotency-Key"
FIRST_DELAY = 0.2
MAX_DELAY = 5.0
"""Backoff between attempts: 0.2 s, doubling, at most 5 s (each jittered by ±20 %)."""


def is_transient(exc: httpx.HTTPError) -> bool:
    """A transport failure worth another attempt (not a malformed URL or our own protocol bug)."""
    return isinstance(
        exc, httpx.TimeoutException | httpx.NetworkError | httpx.RemoteProtocolError | httpx.ProxyError
    )


def never_sent(exc: httpx.HTTPError) -> bool:
    """The call cannot have reached the server: the connection was never made."""
    return isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout)


class Backoff:
    """Delays between attempts: `first`, doubling up to `cap`, each jittered by ±20 %."""

    def __init__(self, first: float | None = None, cap: float | None = None) -> None:
        self.first = FIRST_DELAY if first is None else first
        self.cap = MAX_DELAY if cap is None else cap
        self.failures = 0

    def reset(self) -> None:
        self.failures = 0

    def next_delay(self) -> float:
        delay: float = min(self.first * 2.0**self.failures, self.cap)
        self.failures += 1
        return delay * random.uniform(0.8, 1.2)


class Attempts:
    """The attempts of one logical call: its idempotency key, and whether to try again."""

    def __init__(self, call: Call[Any], retry_for: float) -> None:
        self.call = call
        self.started = time.monotonic()
        patience = current_patience()
        self.until_deadline = patience is not None
        wait_for = retry_for if patience is None else (patience - utcnow()).total_seconds()
        self.give_up = self.started + wait_for
        self.retry_for = retry_for
        self.failures = 0
        self.maybe_applied = False
        """Whether a failed attempt may have reached the server (and been applied there)."""
        self.key = uuid.uuid4().hex if call.method != "GET" else None
        self.headers = {IDEMPOTENCY_HEADER: self.key} if self.key is not None else None
        self._backoff = Backoff()

    def retry_after(self, error: SignoffError, *, maybe_applied: bool = True, servers: int = 1) -> float:
        """Seconds to wait before the next attempt, after `error`; raises `ServerUnavailable`
        (from `error`) when the call's patience has run out. With several `servers` (replicas),
        the next ones are tried at once, and the backoff waits only after each was tried."""
        self.failures += 1
        self.maybe_applied = self.maybe_applied or maybe_applied
        now = time.monotonic()
        remaining = self.give_up - now
        if remaining <= 0:
            why = f"after retry_for ({self.retry_for:g} s)"
            if self.until_deadline:
                why = "as long as the gate could wait"
            raise ServerUnavailable(
                f"{error.message} (gave up on {self.call.method} {self.call.path} {why}; {self.failures} "
                f"attempt{'s' if self.failures != 1 else ''} over {now - self.started:.1f} s)"
            ) from error
        if self.failures == 1:
            log.warning("%s; retrying %s %s with backoff", error.message, self.call.method, self.call.path)
        if self.failures % servers:
            return 0.0
        return min(self._backoff.next_delay(), remaining)
