"""Deciding the inbox's selected cards together: the bar's form posts the ticked ids, one
decision and one reason to `/inbox/batch`, decided by `decide_batch_as` like the API's batch.
With htmx the answer is the bar's summary (decided, skipped and why); the cards change by
themselves through the event stream. Without JavaScript it is a page saying the same.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from starlette.responses import HTMLResponse

from ...batch import BatchResult, batch_decision, check_batch_ids
from ...errors import InvalidInput, SignoffError
from ..context import server_of
from ..deciding import decide_batch_as
from .page_access import Form, PageCaller, is_htmx
from .rendering import page_context, render

router = APIRouter(include_in_schema=False)


@router.post("/inbox/batch", response_class=HTMLResponse)
def decide_selected(http: HttpRequest, caller: PageCaller, form: Form) -> HTMLResponse:
    ids = [value for value in form.getlist("ids") if isinstance(value, str)]
    kind = form.get("type")
    reason = form.get("reason")
    result: BatchResult | None = None
    problem: str | None = None
    status_code = 200
    try:
        if not ids:
            raise InvalidInput("Tick at least one request first.")
        decision = batch_decision(
            kind if isinstance(kind, str) else "", reason if isinstance(reason, str) else None
        )
        result = decide_batch_as(
            server_of(http), check_batch_ids(ids), decision, caller.user, channel=caller.channel
        )
    except SignoffError as exc:
        problem, status_code = exc.message, exc.status_code
    context = {"result": result, "problem": problem}
    if is_htmx(http):
        return render(http, "_batch_result.html", context, status_code=status_code)
    page = page_context(http, caller, active="inbox")
    return render(http, "batch.html", {**page, **context}, status_code=status_code)
