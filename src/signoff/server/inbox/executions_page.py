"""`/executions`: the tool calls in doubt a person may see, the approved ones nobody ran, and
letting one run (again).

A call is in doubt when its process stopped while running the tool: it may or may not have
taken effect, and nothing runs it again by itself. A call is abandoned when it was approved and
the process waiting to run it stopped before it did: nothing ran (a replay of the call runs it).
The inbox says how many there are; this page lists them; each request page says what to do and
has the button that lets the call run.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from starlette.responses import HTMLResponse, RedirectResponse, Response

from ...errors import SignoffError
from ...identity import User
from ...requests import ExecutionStatus
from ...store import Store
from ..context import server_of
from ..executions import rerun_as, visible_executions
from .page_access import PageCaller, PageError
from .rendering import page_context, render

router = APIRouter(include_in_schema=False)
NOTICE_LIMIT = 50
"""The inbox counts in-doubt calls up to this many ('50+')."""


def executions_label(store: Store, user: User, status: ExecutionStatus = ExecutionStatus.IN_DOUBT) -> str:
    """How many calls in `status` (in doubt, abandoned) `user` may see, as the inbox's notice
    says it ('' for none)."""
    views, more = visible_executions(store, user, status=status, limit=NOTICE_LIMIT)
    return f"{len(views)}+" if more else (str(len(views)) if views else "")


@router.get("/executions", response_class=HTMLResponse)
def in_doubt_page(
    http: HttpRequest, caller: PageCaller, cursor: str | None = None, abandoned_cursor: str | None = None
) -> HTMLResponse:
    store = server_of(http).store
    views, next_cursor = visible_executions(store, caller.user, limit=50, cursor=cursor)
    abandoned, next_abandoned = visible_executions(
        store, caller.user, status=ExecutionStatus.ABANDONED, limit=50, cursor=abandoned_cursor
    )
    context = page_context(http, caller, active="")
    context.update(
        views=views,
        next_cursor=next_cursor,
        cursor=cursor,
        abandoned=abandoned,
        next_abandoned=next_abandoned,
        abandoned_cursor=abandoned_cursor,
    )
    return render(http, "executions.html", context)


@router.post("/requests/{request_id}/execution/reset")
def rerun(request_id: str, http: HttpRequest, caller: PageCaller) -> Response:
    """The request page's "Let it run again" button."""
    try:
        rerun_as(server_of(http).store, request_id, caller.user, channel=caller.channel)
    except SignoffError as exc:
        raise PageError.of(exc) from None
    return RedirectResponse(f"/requests/{request_id}", status_code=303)
