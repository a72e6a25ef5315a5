"""`/history`: every request a person may see, newest first, filtered by status, tool, agent and
app, searched by text (tool, description, thread, agent), 50 to a page."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from starlette.responses import HTMLResponse

from ...presentation.cards import Card
from ...requests import RequestStatus
from ..context import server_of
from .page_access import PageCaller
from .rendering import PAGE_SIZE, page_context, render, visible_to

router = APIRouter(include_in_schema=False)
STATUSES = tuple(status.value for status in RequestStatus)


@dataclass(frozen=True, kw_only=True)
class HistoryFilters:
    status: str = ""
    tool: str = ""
    agent: str = ""
    app: str = ""
    q: str = ""

    @property
    def active(self) -> bool:
        return any((self.status, self.tool, self.agent, self.app, self.q))

    def query(self, **changes: str) -> str:
        """This page's query string with `changes` (empty values dropped)."""
        values = {**vars(self), **changes}
        return urlencode({key: value for key, value in values.items() if value})


@router.get("/history", response_class=HTMLResponse)
def history(
    http: HttpRequest,
    caller: PageCaller,
    status: str = "",
    tool: str = "",
    agent: str = "",
    app: str = "",
    q: str = "",
    cursor: str | None = None,
) -> HTMLResponse:
    filters = HistoryFilters(
        status=status.strip(), tool=tool.strip(), agent=agent.strip(), app=app.strip(), q=q.strip()
    )
    problem = None
    if filters.status and filters.status not in STATUSES:
        problem = f"There is no status {filters.status!r}; showing every status."
        filters = HistoryFilters(tool=filters.tool, agent=filters.agent, app=filters.app, q=filters.q)
    found = server_of(http).store.list_requests(
        status=filters.status or None,
        tool=filters.tool or None,
        agent=filters.agent or None,
        app=filters.app or None,
        search=filters.q or None,
        visible_to=visible_to(caller.user),
        limit=PAGE_SIZE + 1,
        cursor=cursor or None,
    )
    rows = found[:PAGE_SIZE]
    next_cursor = rows[-1].id if len(found) > PAGE_SIZE and rows else None
    context = page_context(http, caller, active="history")
    context.update(
        rows=[Card(request=request) for request in rows],
        filters=filters,
        statuses=STATUSES,
        cursor=cursor,
        next_query=filters.query(cursor=next_cursor) if next_cursor else None,
        first_query=filters.query(),
        problem=problem,
    )
    return render(http, "history.html", context)
