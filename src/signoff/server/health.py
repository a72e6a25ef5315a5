"""`/healthz`: whether this server can do its work, checked by doing some.

A read proves little (a full disk or a read-only file still reads), so the check is a small
real write: a counter bumped and committed like every write, to disk. 200 when it landed; 503,
naming the problem, when it did not.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from .. import __version__
from ..errors import StoreError
from .context import server_of
from .errors import ErrorDetail, error_body

router = APIRouter(tags=["meta"])


class Health(BaseModel):
    ok: Literal[True]
    version: str
    audit_head: int
    """The newest audit entry's sequence number."""


class Unhealthy(BaseModel):
    ok: Literal[False]
    version: str
    error: ErrorDetail
    """Why the store cannot be used: `StoreUnavailable` with the reason (a full disk, a
    read-only database, a lost connection)."""


@router.get(
    "/healthz",
    summary="Liveness, and a real write to the store",
    response_model=Health,
    responses={503: {"model": Unhealthy, "description": "The store cannot write now; the body says why"}},
)
def healthz(http: HttpRequest) -> Health | JSONResponse:
    store = server_of(http).store
    try:
        store.check_writable()
        head = store.audit_head_seq()
    except StoreError as exc:
        body = {"ok": False, "version": __version__, **error_body(type(exc).__name__, exc.message)}
        return JSONResponse(body, 503)
    return Health(ok=True, version=__version__, audit_head=head)
