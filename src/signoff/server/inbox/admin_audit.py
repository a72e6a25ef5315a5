"""`/admin/audit`: the whole audit log, newest first, filtered by time, actor, request, tool,
kind and action, 50 to a page (keyset: each page starts past the last entry of the one before);
verify it (against an anchor too) and anchor it from the page; export what the filters keep as
JSON Lines or CSV (`/v1/audit/export`, streamed). Admins only; the same store operations as
`/v1/audit` and `signoff audit`."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse

from ...audit import AuditAnchor, AuditEntry
from ...audit_filter import AuditFilter
from ...errors import InvalidInput, SignoffError
from ..context import server_of
from .admin_page import admin_context
from .admin_sections import section
from .page_access import PageCaller, is_htmx
from .rendering import PAGE_SIZE, render

router = APIRouter(include_in_schema=False)
KEY = "audit"
section(KEY, "Audit log", "Every entry across requests, filtered; verify, anchor and export it.")
PATH = "/admin/audit"
FILTER_FIELDS = ("since", "until", "actor", "request_id", "tool", "kind", "action")
KINDS = (
    "access",
    "auth",
    "callback",
    "credential",
    "decision",
    "delivery",
    "execution",
    "group",
    "handle",
    "login",
    "request",
    "rules",
    "server",
    "session",
    "token",
    "user",
    "webhook",
)
"""The families of actions signoff writes (the filter takes any)."""


@router.get(PATH, response_class=HTMLResponse)
async def audit_log(
    http: HttpRequest,
    caller: PageCaller,
    since: str = "",
    until: str = "",
    actor: str = "",
    request_id: str = "",
    tool: str = "",
    kind: str = "",
    action: str = "",
    before: int | None = None,
) -> HTMLResponse:
    context = await admin_context(http, caller, section=KEY)
    typed = {
        "since": since,
        "until": until,
        "actor": actor,
        "request_id": request_id,
        "tool": tool,
        "kind": kind,
        "action": action,
    }
    context.update(await run_in_threadpool(_entries, http, typed, before))
    return render(http, "admin_audit.html", context)


@router.get(f"{PATH}/verify", response_class=HTMLResponse)
async def verify(http: HttpRequest, caller: PageCaller, anchor: str = "") -> HTMLResponse:
    """Check the log (and that it extends `anchor`, when one is given)."""
    context = await admin_context(http, caller, section=KEY)
    store = server_of(http).store
    check = _check("verify", anchor=anchor.strip())
    try:
        checked = AuditAnchor.parse(anchor) if anchor.strip() else None
    except ValueError as exc:
        check["error"] = str(exc)
    else:
        check["report"] = await run_in_threadpool(lambda: store.verify_audit(anchor=checked))
    return await _check_answer(http, context, check)


@router.get(f"{PATH}/anchor", response_class=HTMLResponse)
async def anchor(http: HttpRequest, caller: PageCaller) -> HTMLResponse:
    """The head of the log as SEQ:HASH, to keep where the database's writers cannot reach."""
    context = await admin_context(http, caller, section=KEY)
    check = _check("anchor")
    try:
        check["anchor_value"] = str(await run_in_threadpool(server_of(http).store.audit_anchor))
    except SignoffError as exc:
        check["error"] = exc.message
    return await _check_answer(http, context, check)


def _check(kind: str, *, anchor: str = "") -> dict[str, Any]:
    """What the check's result shows: a report, an anchor, or an error."""
    return {"kind": kind, "anchor": anchor, "error": None, "report": None, "anchor_value": ""}


async def _check_answer(http: HttpRequest, context: dict[str, Any], check: dict[str, Any]) -> HTMLResponse:
    context["check"] = check
    if is_htmx(http):
        return render(http, "admin_audit_check.html", context)
    context.update(await run_in_threadpool(_entries, http, {}, None))
    context["check"] = check
    return render(http, "admin_audit.html", context)


def _entries(http: HttpRequest, typed: dict[str, str], before: int | None) -> dict[str, Any]:
    problem = None
    try:
        where = AuditFilter.parse(**{name: typed.get(name) for name in FILTER_FIELDS})
    except InvalidInput as exc:
        problem, where = exc.message, AuditFilter()
    entries: list[AuditEntry] = []
    for entry in server_of(http).store.audit_entries(
        **where.kwargs(), before=before, newest_first=True, batch=PAGE_SIZE
    ):
        entries.append(entry)
        if len(entries) >= PAGE_SIZE:
            break
    kept = where.query()
    older = entries[-1].seq if len(entries) == PAGE_SIZE else None
    return {
        "entries": entries,
        "typed": {name: typed.get(name, "") for name in FILTER_FIELDS},
        "filtered": where.active,
        "problem": problem,
        "kinds": KINDS,
        "before": before,
        "first_query": urlencode(kept),
        "older_query": urlencode({**kept, "before": older}) if older is not None else None,
        "export_query": {fmt: urlencode({**kept, "format": fmt}) for fmt in ("jsonl", "csv")},
        "check": None,
        "data_text": _data_text,
    }


def _data_text(entry: AuditEntry) -> str:
    return json.dumps(entry.data, ensure_ascii=False, indent=2)
