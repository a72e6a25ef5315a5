"""Which index ranges a listing of requests reads (the `list_requests` and `open_counts_by`
queries): what a viewer may see, written as a union of ranges that are each read newest first.

A person sees the requests they created, the ones naming no approver, and the ones naming one
of their principals (themselves, `group:NAME`): three kinds of range (`requests_by_creator`,
`requests_by_audience`, `request_approvers_by_principal`), one per principal and status. An
admin sees every request: `requests_by_audience` for both of its values. A filter that narrows
more than visibility does drives the listing instead (a thread: the thread's key index; a
creator; an approver), and what the viewer may see is then checked on each row it reads.

Every range is keyed by status, so that a person's three open requests are found without
reading past their thirty thousand decided ones; a listing of every status reads each status's
range to one page, and merges them.

An admin's listing that nothing narrows has queries of its own (`listing_query`), which a
planner makes at once: every status is one range of the key, newest first (`list_newest`, and
`list_newest_narrowed` checking a tool, an agent or an app on each row); some statuses are each
status's two `requests_by_audience` ranges (`list_by_status`). So has a person's listing that
nothing narrows but what they may see (`list_visible`), or a tool, an agent or an app too
(`list_visible_narrowed`): their ranges, one arm per status and range (store/queries.py writes
them out), merged newest first by the database as far as the page needs, not a page per range.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..requests import RequestStatus

ALL_STATUSES = tuple(status.value for status in RequestStatus)
VISIBLE_PRINCIPALS = 4
"""`list_visible` reads the ranges of up to this many principals (a person and three of their
groups); a person in more groups is listed through the union (`list_requests`)."""
VISIBLE_PAGE = 100
"""`list_visible` gives pages of up to this many requests (on PostgreSQL a constant of its
statement); a longer page is listed through the union (`list_requests`)."""
SEARCH_WINDOW = 10_000
"""A text search (a substring, which no index finds) looks through at most this many requests,
the newest before the cursor, whoever may see them: its cost stays bounded at any size."""


def audience(viewer: str | None, principals: Sequence[str] | None) -> dict[str, Any]:
    """The ranges holding what `viewer` (with `principals`) may see; everything when None."""
    if viewer is None or principals is None:
        return {"no_approvers": [False, True], "creators": [], "named": []}
    return {"no_approvers": [True], "creators": [viewer], "named": list(principals)}


def listing_params(
    *,
    statuses: Sequence[str] | None,
    viewer: str | None,
    principals: Sequence[str] | None,
    tool: str | None = None,
    agent: str | None = None,
    app: str | None = None,
    thread_id: str | None = None,
    tool_call_id: str | None = None,
    created_by: str | None = None,
    approver: str | None = None,
    search: str | None = None,
    cursor: str | None = None,
    limit: int = 50,
) -> dict[str, Any]:
    """The `list_requests` parameters: the filters, and which ranges drive the listing. A text
    search also needs `search_floor`: the `search_floor` query's answer (else none, '')."""
    drives: dict[str, Any] = {"no_approvers": [], "creators": [], "named": [], "in_thread": None}
    if thread_id is not None:
        drives["in_thread"] = thread_id
    elif created_by is not None:
        drives["creators"] = [created_by]
    elif approver is not None:
        drives["named"] = [approver]
    else:
        drives.update(audience(viewer, principals))
    visibility_drives = thread_id is None and created_by is None and approver is None
    recheck = principals is not None and not visibility_drives
    pattern = _like_pattern(search)
    narrowed = (tool, agent, app, thread_id, tool_call_id, created_by, approver, pattern)
    return {
        **drives,
        "statuses": list(ALL_STATUSES if statuses is None else statuses),
        "status_mask": status_mask(ALL_STATUSES if statuses is None else statuses),
        "tool": tool,
        "agent": agent,
        "app": app,
        "thread_id": thread_id,
        "tool_call_id": tool_call_id,
        "created_by": created_by,
        "approver": approver,
        "search": pattern,
        "search_floor": "",
        "recheck": recheck,
        "filtered": recheck or any(value is not None for value in narrowed),
        "viewer": viewer,
        "principals": list(principals) if principals is not None else None,
        "cursor": cursor,
        "limit": max(1, min(limit, 1000)),
    }


def status_mask(statuses: Sequence[str]) -> int:
    """The statuses as bits in ALL_STATUSES' order (`list_visible` reads a status's ranges when
    its bit is set); a value that is no status sets none."""
    return sum(1 << index for index, status in enumerate(ALL_STATUSES) if status in statuses)


def _like_pattern(search: str | None) -> str | None:
    """A case-insensitive substring pattern for LIKE (ILIKE in PostgreSQL), `\\` escaping."""
    if not search:
        return None
    escaped = search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def listing_query(params: dict[str, Any]) -> str:
    """The named query that lists with `listing_params`' `params`: an admin's listing with no
    filter reads the key (every status) or the statuses' ranges, and one of every status that a
    tool, an agent or an app narrows reads the key, checking each row; a person's listing that
    at most a tool, an agent or an app narrows, the ranges of what they may see merged (up to
    VISIBLE_PRINCIPALS, a page of up to VISIBLE_PAGE; `<name>_<n>` for n principals, `_after`
    for a later page); any other, the union that every filter may narrow."""
    driven = any(
        params[name] is not None for name in ("thread_id", "tool_call_id", "created_by", "approver", "search")
    )
    narrowed = any(params[name] is not None for name in ("tool", "agent", "app"))
    if params["principals"] is None:
        every_status = set(params["statuses"]) >= set(ALL_STATUSES)
        if driven or (narrowed and not every_status):
            return "list_requests"
        if narrowed:
            return "list_newest_narrowed"
        return "list_newest" if every_status else "list_by_status"
    slots = max(1, len(params["named"]))
    if driven or slots > VISIBLE_PRINCIPALS or params["limit"] > VISIBLE_PAGE:
        return "list_requests"
    name = "list_visible_narrowed" if narrowed else "list_visible"
    if params["cursor"] is not None:
        name += "_after"
    return name if slots == VISIBLE_PRINCIPALS else f"{name}_{slots}"
