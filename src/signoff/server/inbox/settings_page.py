"""`/settings`: a person's own addresses on the channels (Slack, WeCom, Feishu, email, a text
chat), where the requests naming them are sent (DESIGN §9)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from starlette.responses import HTMLResponse, RedirectResponse, Response

from ...errors import SignoffError
from ...store.address_ops import ADDRESS_KINDS
from ..context import server_of
from .page_access import Form, PageCaller
from .rendering import page_context, render

router = APIRouter(include_in_schema=False)
KIND_LABELS = {
    "slack": "Slack user id (U…)",
    "wecom": "WeCom (企业微信) user id",
    "feishu": "Feishu (飞书) open id (ou_…)",
    "email": "Email address",
}


def _page(
    http: HttpRequest, caller: PageCaller, *, error: str | None = None, status: int = 200
) -> HTMLResponse:
    store = server_of(http).store
    context = page_context(http, caller, active="settings")
    context.update(
        addresses=store.addresses_of(caller.user.name),
        kinds=[(kind, KIND_LABELS[kind]) for kind in ADDRESS_KINDS if kind in KIND_LABELS],
        channels=server_of(http).channels.describe(),
        error=error,
    )
    return render(http, "settings.html", context, status_code=status)


@router.get("/settings", response_class=HTMLResponse)
def settings(http: HttpRequest, caller: PageCaller) -> HTMLResponse:
    return _page(http, caller)


@router.post("/settings/addresses", response_class=HTMLResponse)
def set_address(http: HttpRequest, caller: PageCaller, form: Form) -> Response:
    kind = str(form.get("kind", "")).strip()
    if kind == "text":
        kind = f"text:{str(form.get('platform', '')).strip()}"
    address = str(form.get("address", ""))
    store = server_of(http).store
    try:
        if form.get("remove"):
            store.remove_address(caller.user.name, kind, actor=caller.user.name, channel="web")
        else:
            store.set_address(caller.user.name, kind, address, actor=caller.user.name, channel="web")
    except SignoffError as exc:
        return _page(http, caller, error=exc.message, status=exc.status_code)
    return RedirectResponse("/settings", status_code=303)
