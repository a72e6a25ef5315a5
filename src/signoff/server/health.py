"""`/healthz`: whether this server can do its work, checked by doing some.

A read proves little (a full disk or a read-only file still reads), so the check is a small
real write: a counter bumped and committed like every write, to disk. A nearly full disk still
takes that write, so the store's free space (where it can know it: `Store.disk_space`) must be
above the server's threshold too (`disk_health`). 200 when both hold; 503, naming the problem,
when either does not.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from .. import __version__
from ..errors import StoreError
from ..store.disk import DiskSpace
from .context import server_of
from .disk_health import MinFreeDisk, check_disk
from .errors import ErrorDetail, error_body

router = APIRouter(tags=["meta"])


class Disk(BaseModel):
    free: int
    """Bytes free on the filesystem the database is on."""
    total: int
    min_free: int
    """Bytes that must be free for the server to be healthy (`--min-free-disk`)."""


class Health(BaseModel):
    ok: Literal[True]
    version: str
    audit_head: int
    """The newest audit entry's sequence number."""
    disk: Disk | None
    """The database's disk, when the server can read it (SQLite); null for PostgreSQL."""


class Unhealthy(BaseModel):
    ok: Literal[False]
    version: str
    error: ErrorDetail
    """Why the store cannot be used: `StoreUnavailable` with the reason (a full disk, a
    read-only database, a lost connection), or `LowDiskSpace` (less free than the threshold)."""
    disk: Disk | None = None


@router.get(
    "/healthz",
    summary="Liveness, a real write to the store, and room on its disk",
    response_model=Health,
    responses={
        503: {"model": Unhealthy, "description": "The store cannot write now, or its disk is nearly full"}
    },
)
def healthz(http: HttpRequest) -> Health | JSONResponse:
    server = server_of(http)
    store = server.store
    disk: Disk | None = None
    try:
        store.check_writable()
        head = store.audit_head_seq()
        space = store.disk_space()
        disk = _disk(space, server.settings.min_free_disk)
        check_disk(space, server.settings.min_free_disk)
    except StoreError as exc:
        body = {"ok": False, "version": __version__, **error_body(type(exc).__name__, exc.message)}
        if disk is not None:
            body["disk"] = disk.model_dump()
        return JSONResponse(body, 503)
    return Health(ok=True, version=__version__, audit_head=head, disk=disk)


def _disk(space: DiskSpace | None, minimum: MinFreeDisk) -> Disk | None:
    if space is None:
        return None
    return Disk(free=space.free, total=space.total, min_free=minimum.required(space))
