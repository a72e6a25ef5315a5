"""What a PostgreSQL NOTIFY on `signoff_requests` says (the `requests_notify` trigger, migration
0024): `<id>`, `<id>\\t<creator>`, or `<id>\\t<creator>\\t<row as JSON>` for a request that ended
with a quorum of one. The row is what the commit that sent it wrote, so a waiter may resume on it
instead of reading the request again; one that cannot be read as a request is only a wake-up (the
waiter reads, as for any other)."""

from __future__ import annotations

import json
import logging

from ..requests import Request, request_from_record

log = logging.getLogger("signoff.store")


def notified(payload: str) -> tuple[str, str, Request | None]:
    """(request id, creator or "", the ended request when the payload carries it)."""
    request_id, _, rest = payload.partition("\t")
    creator, _, row_json = rest.partition("\t")
    if not row_json:
        return request_id, creator, None
    try:
        row = json.loads(row_json)
        ended = request_from_record(row, ())
    except Exception as exc:  # a row this version cannot read: the waiter reads the request
        log.debug("a NOTIFY's row for %s was not read (%s); waiters read the request", request_id, exc)
        return request_id, creator, None
    if ended.id != request_id or not ended.is_terminal:
        return request_id, creator, None
    return request_id, creator, ended
