"""Rendering pages and fragments: the Jinja2 environment, its filters, the nav bar's context
and the headers every inbox response carries."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import jinja2
import markupsafe
from fastapi import Request as HttpRequest
from starlette.responses import HTMLResponse
from starlette.templating import Jinja2Templates

from ... import __version__
from ..._util import format_moment, format_span, from_iso, utcnow
from ...identity import User
from ...presentation.rendering import shown
from ...requests import RequestStatus
from ...store import Store
from ...visible import visible, visible_json
from ..access import Caller
from ..context import server_of

HERE = Path(__file__).parent
TEMPLATE_DIR = HERE / "templates"
STATIC_DIR = HERE / "static"

PAGE_SIZE = 50
OPEN_STATUSES = [RequestStatus.PENDING.value, RequestStatus.DRAFTING.value]

PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
SECRET_URL_HEADERS = {**PAGE_HEADERS, "Referrer-Policy": "no-referrer", "X-Robots-Tag": "noindex"}
"""For pages whose address holds a secret (login and handle links)."""


def relative(moment: datetime | None) -> str:
    """'3m ago', 'in 2h 5m'."""
    if moment is None:
        return ""
    seconds = (moment - utcnow()).total_seconds()
    if abs(seconds) < 5:
        return "just now"
    text = format_span(seconds)
    return f"in {text}" if seconds > 0 else f"{text} ago"


def countdown(deadline: datetime) -> str:
    seconds = (deadline - utcnow()).total_seconds()
    return f"{format_span(seconds)} left" if seconds > 0 else "past its deadline"


def absolute(moment: datetime | None) -> str:
    return format_moment(moment) if moment is not None else ""


def stored_moment(text: str) -> str:
    """A time kept as ISO text (in a decision record), as pages show times."""
    try:
        return absolute(from_iso(text))
    except ValueError:
        return text


def iso(moment: datetime | None) -> str:
    return moment.isoformat() if moment is not None else ""


_BREAK_AFTER = re.compile(r"([._/:-])")


def breakable(text: str) -> markupsafe.Markup:
    """A long name that may wrap after its separators (`create_or_update_<wbr>environment`)
    rather than anywhere in a word; hidden characters escaped as everywhere."""
    escaped = str(markupsafe.escape(visible(text)))
    return markupsafe.Markup(_BREAK_AFTER.sub(r"\1<wbr>", escaped))


def value_text(value: Any) -> str:
    """One value as a page shows it: text as it is, anything else as JSON."""
    return value if isinstance(value, str) else visible_json(value)


def svg_number(value: float) -> str:
    """A coordinate for SVG: at most two decimals, no trailing zeros."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
        autoescape=True,
        finalize=shown,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
        auto_reload=False,
    )
    env.filters.update(
        relative=relative,
        countdown=countdown,
        absolute=absolute,
        iso=iso,
        n=svg_number,
        duration=format_span,
        value=value_text,
        breakable=breakable,
        moment=stored_moment,
    )
    env.globals.update(version=__version__)
    return env


templates = Jinja2Templates(env=_environment())


def render(
    http: HttpRequest,
    name: str,
    context: Mapping[str, Any],
    *,
    status_code: int = 200,
    headers: Mapping[str, str] = PAGE_HEADERS,
) -> HTMLResponse:
    response = templates.TemplateResponse(http, name, dict(context), status_code=status_code)
    response.headers.update(headers)
    started = getattr(http.state, "started", None)
    if started is not None:  # from sign-in check to rendered page, for benchmarks and browser dev tools
        response.headers["Server-Timing"] = f"page;dur={(time.perf_counter() - started) * 1000:.1f}"
    return response


def visible_to(user: User) -> str | None:
    """The `visible_to` filter of store listings: admins see everything."""
    return None if user.is_admin else user.name


def pending_label(found: int, more: bool) -> str:
    return f"{found}+" if more else str(found)


def count_waiting(store: Store, user: User) -> str:
    """How many open requests wait for `user`, as the nav shows it ('7', '50+')."""
    found = store.list_requests(status=OPEN_STATUSES, visible_to=visible_to(user), limit=PAGE_SIZE + 1)
    return pending_label(min(len(found), PAGE_SIZE), len(found) > PAGE_SIZE)


def page_context(
    http: HttpRequest, caller: Caller | None, *, active: str, waiting: str | None = None
) -> dict[str, Any]:
    """What the layout needs: who is signed in, the CSRF token, the nav's state."""
    if caller is not None and waiting is None:
        waiting = count_waiting(server_of(http).store, caller.user)
    return {
        "user": caller.user if caller is not None else None,
        "csrf": (caller.csrf or "") if caller is not None else "",
        "active": active,
        "waiting": waiting,
        "live": caller is not None,
        "events_after": server_of(http).feed.position(),
    }
