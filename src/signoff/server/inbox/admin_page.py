"""`/admin`: the administration area's index, listing its sections (admins only)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.responses import HTMLResponse

from ...errors import PermissionDenied
from ..context import server_of
from ..refusals import audit_refusal
from .admin_sections import SECTIONS, require_admin
from .page_access import PageCaller, PageError
from .rendering import page_context, render

router = APIRouter(include_in_schema=False)


async def admin_context(http: HttpRequest, caller: PageCaller, *, section: str) -> dict[str, object]:
    """The layout's context for an admin page, after checking the caller is an admin (a refusal
    is a 403 page, audited)."""
    try:
        require_admin(caller)
    except PermissionDenied as refused:
        data = {"method": http.method, "path": http.url.path}
        store = server_of(http).store
        await run_in_threadpool(
            audit_refusal, store, refused, actor=caller.user.name, channel=caller.channel, data=data
        )
        raise PageError(403, refused.message, title="Refused") from None
    context = page_context(http, caller, active="admin")
    context.update(sections=SECTIONS, section=section)
    return context


def form_text(form: FormData, key: str) -> str:
    """A form field's text, trimmed ('' when it is missing)."""
    return str(form.get(key, "")).strip()


@router.get("/admin", response_class=HTMLResponse)
async def admin_index(http: HttpRequest, caller: PageCaller) -> HTMLResponse:
    return render(http, "admin.html", await admin_context(http, caller, section=""))
