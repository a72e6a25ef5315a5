"""Which requests an AG-UI run shows its caller: the open ones they may decide now."""

from __future__ import annotations

from datetime import datetime

from ..._util import utcnow
from ...decision_checks import may_decide
from ...identity import User
from ...requests import Request
from ...store import Store
from ..access import listing_filter

PAGE = 500
MAX_CALLS = 1000
"""At most this many requests in one run: the newest, shown oldest first."""
MAX_PAGES = 20
"""Listing pages read at most, for a caller (an admin) who sees far more than they may decide."""


def decidable(request: Request, user: User, now: datetime) -> bool:
    """Open, before its deadline, naming `user` (or nobody) as approver, and not yet approved
    by them (a quorum's other approvers still to come)."""
    return (
        not request.is_terminal
        and request.deadline > now
        and may_decide(request, user.name, user.groups)
        and user.name not in request.approvals
    )


def open_requests(store: Store, user: User) -> list[Request]:
    """The drafting and pending requests `user` may decide (the newest MAX_CALLS), oldest
    first, read with the same visibility filter as every listing."""
    now = utcnow()
    found: list[Request] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = store.list_requests(
            status=["pending", "drafting"], limit=PAGE, cursor=cursor, **listing_filter(user)
        )
        found.extend(request for request in page if decidable(request, user, now))
        if len(page) < PAGE or len(found) >= MAX_CALLS:
            break
        cursor = page[-1].id
    return found[:MAX_CALLS][::-1]
