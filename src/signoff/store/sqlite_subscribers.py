"""Which events some enabled webhook wants, as a SQLite store's writer remembers it: a write
whose event no webhook wants, on a request that sent no notices, skips the outbox's
`INSERT … SELECT` (nothing would be inserted).

Fail closed: the memory is only trusted while no other connection has committed since it was
read (`PRAGMA data_version` on the writer, checked inside the write transaction, where no other
connection can commit), and this store forgets it in every transaction that changes a webhook."""

from __future__ import annotations

import json
import sqlite3

WEBHOOK_EVENTS = "SELECT events FROM webhooks WHERE disabled = 0"


class SubscribedEvents:
    """The events enabled webhooks want, read again when another connection may have changed them."""

    def __init__(self) -> None:
        self._known: tuple[sqlite3.Connection, int, frozenset[str]] | None = None
        """(the writer connection, its data_version then, the events)."""

    def wanted(self, connection: sqlite3.Connection, event: str) -> bool:
        """Whether some enabled webhook wants `event`. Call inside a write transaction on `connection`."""
        version = connection.execute("PRAGMA data_version").fetchone()[0]
        known = self._known
        if known is None or known[0] is not connection or known[1] != version:
            events = frozenset(
                wanted for (text,) in connection.execute(WEBHOOK_EVENTS) for wanted in json.loads(text)
            )
            known = self._known = (connection, version, events)
        return event in known[2]

    def forget(self) -> None:
        """A webhook changed in this store's write: read the events again at the next write."""
        self._known = None
