"""`/overview`: what is waiting (by tool, by agent) and how deciding goes (decisions per day over
30 days, time to decision), as server-rendered SVG."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from datetime import timedelta

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from starlette.responses import HTMLResponse

from ..._util import format_span, utcnow
from ...store.report_ops import DecidedRow
from ..context import server_of
from .charts import ColumnChart, columns
from .charts import bars as bar_rows
from .page_access import PageCaller
from .rendering import page_context, render

router = APIRouter(include_in_schema=False)
DAYS = 30
OUTCOMES = ("approved", "rejected", "responded", "expired", "cancelled")
OUTCOME_OF_STATUS = {
    "approved": "approved",
    "edited": "approved",
    "rejected": "rejected",
    "responded": "responded",
    "expired": "expired",
    "cancelled": "cancelled",
}
PEOPLE_DECIDED = frozenset({"approved", "edited", "rejected", "responded"})
WAIT_BUCKETS = (
    (60.0, "<1m"),
    (300.0, "1–5m"),
    (900.0, "5–15m"),
    (3600.0, "15–60m"),
    (4 * 3600.0, "1–4h"),
    (24 * 3600.0, "4–24h"),
    (float("inf"), ">1d"),
)


def decisions_per_day(rows: list[DecidedRow]) -> ColumnChart:
    today = utcnow().date()
    days = [today - timedelta(days=back) for back in range(DAYS - 1, -1, -1)]
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        counts[row.decided_at.date().isoformat()][OUTCOME_OF_STATUS.get(row.status, row.status)] += 1
    slots = [(day.isoformat(), counts[day.isoformat()]) for day in days]
    return columns(slots, OUTCOMES, label_every=7)


def time_to_decision(rows: list[DecidedRow]) -> ColumnChart:
    counts: Counter[str] = Counter()
    for row in rows:
        if row.status in PEOPLE_DECIDED:
            counts[next(label for limit, label in WAIT_BUCKETS if row.seconds_to_decision < limit)] += 1
    return columns(
        [(label, {"decisions": counts[label]}) for _, label in WAIT_BUCKETS],
        ("decisions",),
        slot_width=DAYS * 20 / len(WAIT_BUCKETS),
    )


def summary(open_total: int, rows: list[DecidedRow]) -> list[tuple[str, str]]:
    by_people = [row for row in rows if row.status in PEOPLE_DECIDED]
    approved = sum(1 for row in by_people if row.status in ("approved", "edited"))
    waits = sorted(row.seconds_to_decision for row in by_people)
    median = format_span(statistics.median(waits)) if waits else "–"
    p90 = format_span(waits[int(0.9 * (len(waits) - 1))]) if waits else "–"
    rate = f"{100 * approved / len(by_people):.0f}%" if by_people else "–"
    return [
        ("Waiting now", str(open_total)),
        (f"Decided in {DAYS} days", str(len(by_people))),
        ("Approved", rate),
        ("Median time to decision", median),
        ("90% decided within", p90),
        ("Expired", str(sum(1 for row in rows if row.status == "expired"))),
    ]


@router.get("/overview", response_class=HTMLResponse)
def overview(http: HttpRequest, caller: PageCaller) -> HTMLResponse:
    store = server_of(http).store
    viewer = None if caller.user.is_admin else caller.user.name
    open_counts = store.open_counts(visible_to=viewer)
    by_tool: Counter[str] = Counter()
    by_agent: Counter[str] = Counter()
    for tool, agent, count in open_counts:
        by_tool[tool] += count
        by_agent[agent or "(no agent)"] += count
    rows = store.decided_since(timedelta(days=DAYS), visible_to=viewer)
    context = page_context(http, caller, active="overview")
    context.update(
        summary=summary(sum(by_tool.values()), rows),
        by_tool=bar_rows(list(by_tool.items())),
        by_agent=bar_rows(list(by_agent.items())),
        per_day=decisions_per_day(rows),
        waits=time_to_decision(rows),
        outcomes=OUTCOMES,
        days=DAYS,
    )
    return render(http, "overview.html", context)
