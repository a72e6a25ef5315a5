"""How much room the database has: the free space of the filesystem its files are on.

A SQLite store knows (its file is on this machine); a PostgreSQL store does not (the data lives
on the database server, which this process may not even run beside, and whose data directory a
client cannot see), so it reports None and `/healthz` relies on its real write there: a full
PostgreSQL server refuses writes itself."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from ..errors import StoreUnavailable


@dataclass(frozen=True, kw_only=True)
class DiskSpace:
    free: int
    """Bytes this process may still write there."""
    total: int


def disk_space_of(path: str | Path) -> DiskSpace:
    """The filesystem holding `path`; `StoreUnavailable` when it cannot be read."""
    try:
        usage = shutil.disk_usage(path)
    except OSError as exc:
        raise StoreUnavailable(
            f"cannot read the free space where the database is ({exc.strerror or exc})"
        ) from None
    return DiskSpace(free=usage.free, total=usage.total)


__all__ = ["DiskSpace", "disk_space_of"]
