"""The sealer: moves queued audit entries into the hash chain (DESIGN §11).

Every replica runs one; whichever holds the audit head's lock seals, the others skip their turn
(`seal_audit(wait=False)`), so one replica seals at a time and another takes over at its next
turn when that one dies. Stores that seal each entry as it commits (SQLite) need no sealer.
"""

from __future__ import annotations

import asyncio
import logging

from ..errors import StoreUnavailable
from .context import Server

log = logging.getLogger("signoff.server")


async def run_sealer(server: Server, interval: float) -> None:
    """Seal every `interval` seconds until cancelled, in the server's store threads; a store that
    cannot be used is tried again."""
    unavailable: str | None = None
    while True:
        try:
            await server.run(server.store.seal_audit, wait=False)
        except StoreUnavailable as exc:
            if exc.message != unavailable:
                log.warning("the sealer cannot use the store (%s); trying again until it can", exc.message)
                unavailable = exc.message
        except Exception:
            log.exception("sealing the audit log failed; trying again")
        else:
            if unavailable is not None:
                log.warning("the sealer can use the store again")
                unavailable = None
        await asyncio.sleep(interval)
