"""`/v1/audit` (filters) and `/v1/audit/export` (JSONL). The whole log is for admins; anyone
reads a request's own trail at `/v1/requests/{id}/audit`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi import Request as HttpRequest
from fastapi.responses import StreamingResponse

from ...audit import AuditAnchor
from ...errors import InvalidInput
from ..access import CurrentUser, require_admin
from ..context import server_of
from ..errors import API_ERRORS, ErrorBody
from ..limits import MAX_INTEGER
from .shown import ShownAs
from .views import AnchorView, AuditPage, AuditReportView

router = APIRouter(prefix="/v1/audit", tags=["audit"], responses=API_ERRORS)
JSON_LINES = "application/x-ndjson"


@router.get("", summary="Audit entries in order (admins)")
def audit(
    http: HttpRequest,
    user: CurrentUser,
    request_id: str | None = None,
    action: str | None = None,
    actor: str | None = None,
    after: Annotated[
        int, Query(ge=0, le=MAX_INTEGER, description="Only entries after this sequence number.")
    ] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> Annotated[dict[str, Any], ShownAs(AuditPage)]:
    require_admin(user)
    entries = []
    for entry in server_of(http).store.audit_entries(
        request_id=request_id, action=action, actor=actor, after=after, batch=limit
    ):
        entries.append(entry.to_dict())
        if len(entries) >= limit:
            break
    return {"items": entries, "next_after": entries[-1]["seq"] if len(entries) == limit else None}


@router.get(
    "/export",
    summary="The whole log as JSON Lines (admins)",
    # A response class without a media type, so that the errors stay documented as JSON.
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "One audit entry per line",
            "content": {JSON_LINES: {"schema": {"type": "string"}}},
        }
    },
)
def export(http: HttpRequest, user: CurrentUser) -> StreamingResponse:
    require_admin(user)
    store = server_of(http).store

    def lines() -> Iterator[str]:
        for entry in store.audit_entries():
            yield json.dumps(entry.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n"

    return StreamingResponse(
        lines(),
        media_type=JSON_LINES,
        headers={"Content-Disposition": 'attachment; filename="signoff-audit.jsonl"'},
    )


@router.get("/verify", summary="Check the log, its guards and every request against it (admins)")
def verify(
    http: HttpRequest,
    user: CurrentUser,
    anchor: Annotated[
        str | None,
        Query(
            description="SEQ:HASH from `/v1/audit/anchor` (or `signoff audit anchor`), kept elsewhere: "
            "also check that the log still extends it."
        ),
    ] = None,
) -> Annotated[dict[str, Any], ShownAs(AuditReportView)]:
    """`ok` is false, with the problems listed, when an entry was edited, deleted or cut off, the
    head was moved back, a guarding table or trigger is missing, the log no longer extends the
    anchor, or a request's status or final args differ from what its entries recorded."""
    require_admin(user)
    checked = None
    if anchor is not None:
        try:
            checked = AuditAnchor.parse(anchor)
        except ValueError as exc:
            raise InvalidInput(str(exc)) from None
    return server_of(http).store.verify_audit(anchor=checked).to_dict()


@router.get(
    "/anchor",
    summary="The log's head as an anchor to keep elsewhere (admins)",
    responses={
        409: {
            "model": ErrorBody,
            "description": "`AuditBroken`: the log does not end at its recorded head; verify says how",
        }
    },
)
def anchor(http: HttpRequest, user: CurrentUser) -> Annotated[dict[str, Any], ShownAs(AnchorView)]:
    """`{"seq", "hash", "anchor": "SEQ:HASH"}`. Keep `anchor` where the database's writers cannot
    reach it; `/v1/audit/verify?anchor=SEQ:HASH` later proves nothing up to it was rewritten."""
    require_admin(user)
    return server_of(http).store.audit_anchor().to_dict()
