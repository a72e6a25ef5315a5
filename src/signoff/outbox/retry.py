"""When to try a delivery again: exponential backoff with jitter, until the row is too old."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import timedelta


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """The n-th retry waits about `first * factor**(n-1)` seconds (at most `cap`), give or take
    `jitter` (a fraction, so that rows failing together do not come back together); a row still
    failing `give_up_after` its creation is dead-lettered. The defaults keep trying for 26 hours
    (webhooks must be retried for at least a day): 5 s, 10 s, 20 s … then hourly."""

    first: float = 5.0
    factor: float = 2.0
    cap: float = 3600.0
    jitter: float = 0.2
    give_up_after: timedelta = timedelta(hours=26)

    def delay(self, attempts: int, retry_after: float | None = None) -> float:
        """Seconds to wait after the `attempts`-th failed attempt (at least what the platform
        asked for with `retry_after`)."""
        base = min(self.cap, self.first * self.factor ** max(0, attempts - 1))
        wait = base * random.uniform(1 - self.jitter, 1 + self.jitter)
        return max(wait, retry_after or 0.0)

    @classmethod
    def quick(cls) -> RetryPolicy:
        """For tests and benchmarks: retries within tens of milliseconds."""
        return cls(first=0.02, factor=2.0, cap=0.2, jitter=0.2, give_up_after=timedelta(minutes=5))
