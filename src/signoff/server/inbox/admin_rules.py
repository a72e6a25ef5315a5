"""`/admin/rules`: edit the rule layers (admins). Each layer is YAML text, checked as
`signoff config import` checks a file; Preview shows what would change (the entries, before and
after) and a sample call's answer under the rules in force and under the proposed ones, side by
side; Apply applies exactly what was previewed, and only if nobody changed the rules meanwhile.
Below, the rules tried in shadow (`admin_shadow`: Try in shadow instead of Apply), and the rules'
history (from the audit log), each change with a Revert.

The same store operations as `PUT /v1/rules?if_version=`, `POST /v1/rules/diff`,
`/v1/rules/history` and `signoff config import/diff/history/revert`. The forms work with htmx
(the preview swapped in place) and without (the page again, or a redirect after a change)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse, RedirectResponse, Response

from ...errors import RulesChanged, SignoffError
from ...rules.history import RuleChange
from ...rules.preview import RulesPreview
from ..context import server_of
from .admin_page import admin_context
from .admin_sections import section
from .admin_shadow import shadow_context, shadow_note
from .page_access import Form, PageCaller, PageError, is_htmx
from .rendering import render
from .rules_editor import FIELDSETS, LAYER_TEXTS, EditorForm, digest

router = APIRouter(include_in_schema=False)
KEY = "rules"
section(KEY, "Rules", "Edit the layers with a diff and an explain preview; every change, and a revert.")
HISTORY_PAGE = 20
PATH = "/admin/rules"


@router.get(PATH, response_class=HTMLResponse)
async def rules_admin(
    http: HttpRequest,
    caller: PageCaller,
    before: int | None = None,
    applied: int | None = None,
    shadow: str | None = None,
    shadow_id: int | None = None,
) -> HTMLResponse:
    context = await admin_context(http, caller, section=KEY)
    store = server_of(http).store
    form = EditorForm.of(await run_in_threadpool(store.load_rules))
    context.update(await run_in_threadpool(_page, http, form, before=before))
    if applied is not None:
        context["notice"] = f"Applied: the rules are at version {applied}."
    elif (note := shadow_note(shadow, shadow_id)) is not None:
        context["notice"] = note
    return render(http, "admin_rules.html", context)


@router.post(f"{PATH}/preview", response_class=HTMLResponse)
async def preview(http: HttpRequest, caller: PageCaller, form: Form) -> Response:
    context = await admin_context(http, caller, section=KEY)
    editor = EditorForm.read(form)
    found = await run_in_threadpool(_preview, http, editor)
    return _preview_answer(http, context, editor, *found)


@router.post(f"{PATH}/apply", response_class=HTMLResponse)
async def apply(http: HttpRequest, caller: PageCaller, form: Form) -> Response:
    context = await admin_context(http, caller, section=KEY)
    editor = EditorForm.read(form)
    store = server_of(http).store
    try:
        proposed = editor.proposed()
        version = editor.applied_version()
        if digest(proposed) != editor.previewed:
            raise RulesChanged("The rules in the editor changed since the preview: preview them again")
        who = {"actor": caller.user.name, "channel": caller.channel}
        applied = await run_in_threadpool(lambda: store.replace_rules(proposed, **who, if_version=version))
    except SignoffError as exc:
        found = await run_in_threadpool(_preview, http, editor)
        return _preview_answer(http, context, editor, *found, error=exc)
    return _changed(http, applied)


@router.post(f"{PATH}/revert", response_class=HTMLResponse)
async def revert(http: HttpRequest, caller: PageCaller, form: Form) -> Response:
    await admin_context(http, caller, section=KEY)
    seq = str(form.get("seq", "")).strip()
    if not seq.isdigit():
        raise PageError(422, "Name the change to revert by its number")
    store = server_of(http).store
    try:
        change = await run_in_threadpool(
            lambda: store.revert_rule_change(int(seq), actor=caller.user.name, channel=caller.channel)
        )
    except SignoffError as exc:
        raise PageError.of(exc) from None
    return _changed(http, change.version or 0)


def _changed(http: HttpRequest, version: int) -> Response:
    """After a change: the page again (htmx follows HX-Redirect), with a notice naming the version."""
    target = f"{PATH}?applied={version}"
    if is_htmx(http):
        return Response(status_code=200, headers={"HX-Redirect": target})
    return RedirectResponse(target, status_code=303)


def _preview(http: HttpRequest, editor: EditorForm) -> tuple[RulesPreview | None, SignoffError | None]:
    try:
        proposed = editor.proposed()
        sample = editor.sample_call()
        return server_of(http).store.preview_rules(proposed, sample), None
    except SignoffError as exc:
        return None, exc


def _preview_answer(
    http: HttpRequest,
    context: dict[str, Any],
    editor: EditorForm,
    found: RulesPreview | None,
    problem: SignoffError | None,
    *,
    error: SignoffError | None = None,
) -> Response:
    """The preview (htmx: in place), or the page with it; an error's status when there is one."""
    shown = error or problem
    status = shown.status_code if shown is not None else 200
    if is_htmx(http):
        context.update(_editor_context(editor, found, shown))
        return render(http, "admin_rules_preview.html", context, status_code=status)
    context.update(_page(http, editor, before=None))
    context.update(_editor_context(editor, found, shown))
    return render(http, "admin_rules.html", context, status_code=status)


def _editor_context(
    editor: EditorForm, found: RulesPreview | None, problem: SignoffError | None
) -> dict[str, Any]:
    return {
        "preview": found,
        "problem": problem.message if problem is not None else None,
        "previewed": digest(editor.proposed()) if found is not None else "",
    }


def _page(http: HttpRequest, editor: EditorForm, *, before: int | None) -> dict[str, Any]:
    store = server_of(http).store
    history: list[RuleChange] = store.rule_history(before=before, limit=HISTORY_PAGE)
    return {
        "editor": editor,
        "layers": LAYER_TEXTS,
        "fieldsets": FIELDSETS,
        "rules_version": store.rules_version(),
        "history": history,
        "history_before": before,
        "older": history[-1].seq if len(history) == HISTORY_PAGE else None,
        "preview": None,
        "problem": None,
        "previewed": "",
        "notice": None,
        **shadow_context(store),
    }
