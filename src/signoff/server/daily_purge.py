"""The server's daily purge (`--purge-older-than DAYS`): each replica's sweeper asks once a day,
and only the first replica to claim the day (a compare-and-set in the store) runs it."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, date, datetime

from ..retention import DailyPurge, PurgeReport
from ..store import Store

log = logging.getLogger("signoff.server")
EPOCH = date(1970, 1, 1)


def day_of(now: datetime) -> int:
    """Days since 1970 (UTC): the day a purge is claimed for."""
    return (now.astimezone(UTC).date() - EPOCH).days


def run_daily_purge(store: Store, daily: DailyPurge, now: datetime) -> PurgeReport | None:
    """Purge what closed before `now - older_than` if this replica is the first to claim today;
    None if another replica has (or this one already did)."""
    if not store.claim_daily_purge(day_of(now)):
        return None
    report = store.purge(
        now - daily.older_than,
        export=daily.export_for(now),
        keep_audit=False,
        actor="signoff",
        channel="sweeper",
    )
    log.info(
        "purged what closed before %s: %s%s",
        report.before.isoformat(),
        ", ".join(f"{count} {name}" for name, count in report.counts().items()),
        f"; audit entries exported to {report.export}" if report.export is not None else "",
    )
    return report


def purge_failed(done: asyncio.Task[object]) -> None:
    """Log why a finished daily purge failed, if it did (the next day's runs again)."""
    if done.cancelled():
        return
    error = done.exception()
    if error is not None:
        log.error("the daily purge failed: %s; the next day's purge tries again", error, exc_info=error)
