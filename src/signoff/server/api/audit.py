"""`/v1/audit` (filtered by time, actor, request, tool, kind, action; keyset pages either way),
`/v1/audit/export` (JSON Lines or CSV, streamed), `/verify` and `/anchor`. The whole log is for
admins; anyone reads a request's own trail at `/v1/requests/{id}/audit`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query
from fastapi import Request as HttpRequest
from fastapi.responses import StreamingResponse

from ...audit import AuditAnchor
from ...audit_export import CSV, EXPORTS, JSON_LINES
from ...audit_filter import AuditFilter
from ...errors import InvalidInput
from ..access import CurrentUser, require_admin
from ..context import server_of
from ..errors import API_ERRORS, ErrorBody
from ..limits import MAX_INTEGER
from .shown import ShownAs
from .views import AnchorView, AuditPage, AuditReportView

router = APIRouter(prefix="/v1/audit", tags=["audit"], responses=API_ERRORS)


def audit_filter(
    since: Annotated[
        str | None, Query(description="Only entries at or after this moment (UTC unless it names a zone).")
    ] = None,
    until: Annotated[str | None, Query(description="Only entries before this moment.")] = None,
    actor: Annotated[str | None, Query(description="Only this actor's entries.")] = None,
    request_id: Annotated[str | None, Query(description="Only this request's entries.")] = None,
    tool: Annotated[str | None, Query(description="Only the entries of requests for this tool.")] = None,
    kind: Annotated[
        str | None,
        Query(description="Only this family of actions: `rules` is `rules.set`, `rules.imported`, …"),
    ] = None,
    action: Annotated[str | None, Query(description="Only this action.")] = None,
) -> AuditFilter:
    return AuditFilter.parse(
        since=since, until=until, actor=actor, request_id=request_id, tool=tool, kind=kind, action=action
    )


Filtered = Annotated[AuditFilter, Depends(audit_filter)]


@router.get("", summary="Audit entries, filtered, a page at a time (admins)")
def audit(
    http: HttpRequest,
    user: CurrentUser,
    where: Filtered,
    order: Annotated[Literal["oldest", "newest"], Query(description="Oldest or newest first.")] = "oldest",
    after: Annotated[
        int, Query(ge=0, le=MAX_INTEGER, description="Oldest first: only entries after this sequence number.")
    ] = 0,
    before: Annotated[
        int | None,
        Query(ge=1, le=MAX_INTEGER, description="Newest first: only entries before this sequence number."),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> Annotated[dict[str, Any], ShownAs(AuditPage)]:
    """Keyset pages: the next page starts past the last entry of this one (`next_after` oldest
    first, `next_before` newest first), however long the log."""
    require_admin(user)
    newest = order == "newest"
    entries = []
    for entry in server_of(http).store.audit_entries(
        **where.kwargs(), after=after, before=before, newest_first=newest, batch=limit
    ):
        entries.append(entry.to_dict())
        if len(entries) >= limit:
            break
    cursor = entries[-1]["seq"] if len(entries) == limit else None
    return {
        "items": entries,
        "next_after": None if newest else cursor,
        "next_before": cursor if newest else None,
    }


@router.get(
    "/export",
    summary="The log, or the entries a filter keeps, as JSON Lines or CSV (admins)",
    # A response class without a media type, so that the errors stay documented as JSON.
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "One audit entry per line, oldest first (CSV: a header row first)",
            "content": {JSON_LINES: {"schema": {"type": "string"}}, CSV: {"schema": {"type": "string"}}},
        }
    },
)
def export(
    http: HttpRequest,
    user: CurrentUser,
    where: Filtered,
    file_format: Annotated[
        Literal["jsonl", "csv"], Query(alias="format", description="JSON Lines (exact) or CSV.")
    ] = "jsonl",
) -> StreamingResponse:
    """Streamed as it is read. An export of the whole log (no filter) verifies on its own:
    `signoff audit verify --file FILE`."""
    require_admin(user)
    store = server_of(http).store
    write, media_type, filename = EXPORTS[file_format]
    return StreamingResponse(
        write(store.audit_entries(**where.kwargs())),
        media_type=media_type,
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
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
