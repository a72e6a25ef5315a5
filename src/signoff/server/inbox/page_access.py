"""Who is looking at a page, and what a page shows when it cannot be shown.

Pages use the API's `authenticate` (session cookie or Bearer token; the CSRF token on every
POST) but answer as pages: a person without a session is sent to `/login`, and a refusal is an
HTML page (or, for an htmx request, a message in the page's flash area), never JSON.
"""

from __future__ import annotations

import time
from typing import Annotated
from urllib.parse import urlsplit

from fastapi import Depends, FastAPI
from fastapi import Request as HttpRequest
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.responses import RedirectResponse, Response

from ...errors import NotAuthenticated, PermissionDenied, SignoffError, TooManySignIns
from ..access import Caller, authenticate_page
from ..context import server_of
from ..refusals import audit_refusal
from .rendering import PAGE_HEADERS, page_context, render

LOGIN_PATH = "/login"
TITLES = {
    400: "Bad request",
    401: "Sign in needed",
    403: "Not yours to see",
    404: "Not found",
    409: "Conflict",
    410: "Gone",
    422: "Cannot use that",
    429: "Too many failed sign-ins",
}


class LoginRequired(Exception):
    """No valid session: the person is sent to the login page."""


class PageError(Exception):
    """A page that cannot be shown, with its HTTP status and a sentence saying why."""

    def __init__(
        self,
        status_code: int,
        message: str,
        *,
        title: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.message = message
        self.title = title or TITLES.get(status_code, "Something went wrong")
        self.headers = headers or {}

    @classmethod
    def of(cls, error: SignoffError) -> PageError:
        return cls(error.status_code, error.message)


AGENTS_USE_THE_API = "The inbox is for people; an agent uses the API (see /docs)."


async def page_caller(http: HttpRequest) -> Caller:
    """The person looking at a page. Agents are refused: they see only their own requests, and
    only through the API."""
    http.state.started = time.perf_counter()
    try:
        caller = await authenticate_page(http)
    except NotAuthenticated:
        raise LoginRequired from None
    except TooManySignIns as exc:
        raise PageError(429, exc.message, headers=retry_after(exc)) from None
    except PermissionDenied as exc:
        raise PageError(403, exc.message, title="Refused") from None
    if caller.user.is_agent:
        refused = PermissionDenied(AGENTS_USE_THE_API)
        data = {"method": http.method, "path": http.url.path}
        store = server_of(http).store
        await run_in_threadpool(
            audit_refusal, store, refused, actor=caller.user.name, channel=caller.channel, data=data
        )
        raise PageError(403, AGENTS_USE_THE_API, title="Refused")
    return caller


async def read_form(http: HttpRequest) -> FormData:
    return await http.form()


PageCaller = Annotated[Caller, Depends(page_caller)]
Form = Annotated[FormData, Depends(read_form)]


def cross_site(http: HttpRequest) -> bool:
    """A form posted from another site's page (cross-site request forgery: a sign-in as someone
    else, a handle link's decision). Browsers say so in Sec-Fetch-Site; older ones in Origin, or
    at least in Referer. A request that carries none of them (not a browser's form) is not."""
    fetched_from = http.headers.get("sec-fetch-site")
    if fetched_from:
        return fetched_from == "cross-site"
    host = http.headers.get("host", "")
    origin = http.headers.get("origin")
    if origin and origin != "null":
        return urlsplit(origin).netloc != host
    referer = http.headers.get("referer")
    if referer:
        return urlsplit(referer).netloc != host
    return False


def retry_after(error: TooManySignIns) -> dict[str, str]:
    return {"Retry-After": str(error.retry_after)}


def is_htmx(http: HttpRequest) -> bool:
    return http.headers.get("hx-request") == "true"


async def _login_required(http: HttpRequest, exc: Exception) -> Response:
    if is_htmx(http):
        return Response(status_code=401, headers={"HX-Redirect": LOGIN_PATH})
    return RedirectResponse(LOGIN_PATH, status_code=303)


async def _page_error(http: HttpRequest, exc: Exception) -> Response:
    assert isinstance(exc, PageError)
    caller: Caller | None = getattr(http.state, "caller", None)
    if is_htmx(http):
        response = render(
            http, "_flash.html", {"message": exc.message, "kind": "error"}, status_code=exc.status_code
        )
        response.headers.update({"HX-Retarget": "#flash", "HX-Reswap": "innerHTML", **exc.headers})
        return response
    context = page_context(http, caller, active="", waiting="")
    context.update(title=exc.title, message=exc.message, status_code=exc.status_code)
    return render(
        http, "error.html", context, status_code=exc.status_code, headers={**PAGE_HEADERS, **exc.headers}
    )


def install_page_errors(app: FastAPI) -> None:
    app.add_exception_handler(LoginRequired, _login_required)
    app.add_exception_handler(PageError, _page_error)
