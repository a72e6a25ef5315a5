"""`/v1/audit` (filters) and `/v1/audit/export` (JSONL). The whole log is for admins; anyone
reads a request's own trail at `/v1/requests/{id}/audit`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi import Request as HttpRequest
from fastapi.responses import StreamingResponse

from ..access import CurrentUser, require_admin
from ..context import server_of
from ..limits import MAX_INTEGER

router = APIRouter(prefix="/v1/audit", tags=["audit"])


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
) -> dict[str, Any]:
    require_admin(user)
    entries = []
    for entry in server_of(http).store.audit_entries(
        request_id=request_id, action=action, actor=actor, after=after, batch=limit
    ):
        entries.append(entry.to_dict())
        if len(entries) >= limit:
            break
    return {"items": entries, "next_after": entries[-1]["seq"] if len(entries) == limit else None}


@router.get("/export", summary="The whole log as JSON Lines (admins)")
def export(http: HttpRequest, user: CurrentUser) -> StreamingResponse:
    require_admin(user)
    store = server_of(http).store

    def lines() -> Iterator[str]:
        for entry in store.audit_entries():
            yield json.dumps(entry.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n"

    return StreamingResponse(
        lines(),
        media_type="application/x-ndjson",
        headers={"Content-Disposition": 'attachment; filename="signoff-audit.jsonl"'},
    )


@router.get("/verify", summary="Check the hash chain (admins)")
def verify(http: HttpRequest, user: CurrentUser) -> dict[str, Any]:
    require_admin(user)
    return server_of(http).store.verify_audit().to_dict()
