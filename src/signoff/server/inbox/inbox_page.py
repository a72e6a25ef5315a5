"""The inbox: the open requests a person may decide, newest first, 50 at a time.

The page is one store query (51 rows: the 51st only says there are more) and 50 cards. The
cards then stay current by themselves (`inbox.js` listens to `/v1/events` and fetches the card
of each request that changed).
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from starlette.responses import HTMLResponse

from ...presentation.cards import Card
from ...requests import ExecutionStatus, Request
from ..access import Caller
from ..context import server_of
from .executions_page import executions_label
from .page_access import PageCaller
from .rendering import (
    OPEN_STATUSES,
    PAGE_SIZE,
    count_waiting,
    page_context,
    pending_label,
    render,
    visible_to,
)

router = APIRouter(include_in_schema=False)


def _open_page(http: HttpRequest, caller: Caller, cursor: str | None) -> tuple[list[Request], str | None]:
    found = server_of(http).store.list_requests(
        status=OPEN_STATUSES, visible_to=visible_to(caller.user), limit=PAGE_SIZE + 1, cursor=cursor
    )
    page = found[:PAGE_SIZE]
    more = len(found) > PAGE_SIZE
    return page, page[-1].id if more and page else None


@router.get("/", response_class=HTMLResponse)
def inbox(http: HttpRequest, caller: PageCaller, cursor: str | None = None) -> HTMLResponse:
    page, next_cursor = _open_page(http, caller, cursor)
    waiting = pending_label(len(page), next_cursor is not None) if cursor is None else None
    context = page_context(http, caller, active="inbox", waiting=waiting)
    context.update(
        cards=[Card(request=request, viewer=caller.user) for request in page],
        next_cursor=next_cursor,
        cursor=cursor,
        in_doubt=executions_label(server_of(http).store, caller.user),
        abandoned=executions_label(server_of(http).store, caller.user, ExecutionStatus.ABANDONED),
    )
    return render(http, "inbox.html", context)


@router.get("/inbox/cards", response_class=HTMLResponse)
def more_cards(http: HttpRequest, caller: PageCaller, cursor: str | None = None) -> HTMLResponse:
    """The next page of cards, with its own "load more" button (htmx appends it in place)."""
    page, next_cursor = _open_page(http, caller, cursor)
    context = page_context(http, caller, active="inbox", waiting="")
    context.update(
        cards=[Card(request=request, viewer=caller.user) for request in page], next_cursor=next_cursor
    )
    return render(http, "_card_page.html", context)


@router.get("/inbox/count", response_class=HTMLResponse)
def waiting_count(http: HttpRequest, caller: PageCaller) -> HTMLResponse:
    """The nav's count of open requests, as text ('7', '50+')."""
    return HTMLResponse(
        count_waiting(server_of(http).store, caller.user), headers={"Cache-Control": "no-store"}
    )
