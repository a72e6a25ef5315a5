"""How the delivery worker runs (`signoff serve` options, or `OutboxSettings(...)` in code)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from .retry import RetryPolicy


@dataclass(frozen=True, kw_only=True)
class OutboxSettings:
    enabled: bool = True
    """Run the delivery worker in this server (every replica may: each row goes to one)."""
    poll: float = 0.5
    """Seconds between looks at the outbox when no change in this process wakes the worker
    (rows written by other processes, retries coming due)."""
    batch: int = 200
    """Rows under way at once, in all."""
    lease: timedelta = timedelta(minutes=2)
    """How long a claimed row is this worker's: a worker that dies holding rows leaves them to
    be taken again after this."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    webhook_timeout: float = 10.0
    webhook_concurrency: int = 16
    """Deliveries under way at once per webhook (each webhook is its own lane)."""
    queue_factor: int = 4
    """A lane holds at most concurrency × this many claimed rows; more wait in the table, so a
    hung lane holds few rows and never the others' share."""
    postpone: timedelta = timedelta(milliseconds=500)
    """How long an update waits for its notice to be sent first, and a row for a full lane."""
    handle_ttl: timedelta = timedelta(hours=24)
    """The longest a notice's link works (never past the request's deadline)."""
