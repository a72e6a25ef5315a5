"""The Rules page's "Tried in shadow" section (admins): the editor's rules tried in shadow instead
of applied, each shadow with its hits counted and its latest hits, and Promote or Drop. The same
store operations as `/v1/rules/shadow` and `signoff rules shadow`."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi import Path as PathParam
from fastapi import Request as HttpRequest
from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse, RedirectResponse, Response

from ...errors import SignoffError
from ...store import Store
from ..context import server_of
from .admin_page import admin_context, form_text
from .page_access import Form, PageCaller, PageError, is_htmx
from .rules_editor import EditorForm

router = APIRouter(include_in_schema=False)
RULES_PATH = "/admin/rules"
SECTION = "rules"
LATEST_HITS = 10
DEFAULT_LABEL = "Tried from the rules editor"
NOTES = {"added": "added", "promoted": "promoted: its rules are in force", "dropped": "dropped"}
"""What the page says after each change (`?shadow=<what>&shadow_id=N`)."""


def shadow_context(store: Store) -> dict[str, Any]:
    """The section's context: each active shadow with its hits per rule and its latest hits."""
    shadows = store.shadow_rules()
    return {
        "shadows": [
            (shadow, store.shadow_hits_by_rule(shadow.id), store.shadow_hits(shadow.id, limit=LATEST_HITS))
            for shadow in shadows
        ]
    }


def shadow_note(what: str | None, shadow_id: int | None) -> str | None:
    if what not in NOTES or shadow_id is None:
        return None
    return f"Shadow #{shadow_id} {NOTES[what]}."


@router.post(f"{RULES_PATH}/shadow", response_class=HTMLResponse)
async def add(http: HttpRequest, caller: PageCaller, form: Form) -> Response:
    await admin_context(http, caller, section=SECTION)
    editor = EditorForm.read(form)
    label = form_text(form, "shadow_label") or DEFAULT_LABEL
    store = server_of(http).store
    try:
        proposed = editor.proposed()
        shadow = await run_in_threadpool(
            lambda: store.add_shadow_rules(
                proposed, label=label, actor=caller.user.name, channel=caller.channel
            )
        )
    except SignoffError as exc:
        raise PageError.of(exc) from None
    return _changed(http, "added", shadow.id)


@router.post(f"{RULES_PATH}/shadow/{{shadow_id}}/promote", response_class=HTMLResponse)
async def promote(
    http: HttpRequest, caller: PageCaller, shadow_id: int = PathParam(ge=1, le=2**62)
) -> Response:
    await admin_context(http, caller, section=SECTION)
    store = server_of(http).store
    try:
        await run_in_threadpool(
            lambda: store.promote_shadow_rules(shadow_id, actor=caller.user.name, channel=caller.channel)
        )
    except SignoffError as exc:
        raise PageError.of(exc) from None
    return _changed(http, "promoted", shadow_id)


@router.post(f"{RULES_PATH}/shadow/{{shadow_id}}/drop", response_class=HTMLResponse)
async def drop(http: HttpRequest, caller: PageCaller, shadow_id: int = PathParam(ge=1, le=2**62)) -> Response:
    await admin_context(http, caller, section=SECTION)
    store = server_of(http).store
    try:
        await run_in_threadpool(
            lambda: store.drop_shadow_rules(shadow_id, actor=caller.user.name, channel=caller.channel)
        )
    except SignoffError as exc:
        raise PageError.of(exc) from None
    return _changed(http, "dropped", shadow_id)


def _changed(http: HttpRequest, what: str, shadow_id: int) -> Response:
    target = f"{RULES_PATH}?shadow={what}&shadow_id={shadow_id}#shadow-rules"
    if is_htmx(http):
        return Response(status_code=200, headers={"HX-Redirect": target})
    return RedirectResponse(target, status_code=303)
