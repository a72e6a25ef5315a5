"""Every error as JSON: `{"error": {"type": ..., "message": ...}}` with the error's status code.

signoff's own errors carry their status (a store that cannot write now is `StoreUnavailable`,
503); an exception nobody expected is a 500 with the same body, logged with its traceback.
Either way the answer is a complete response and the HTTP connection stays open. Refusals (401,
403) are audited on the way out (see `refusals`).
"""

from __future__ import annotations

import logging
import math
from typing import Any

from fastapi import FastAPI
from fastapi import Request as HttpRequest
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import InvalidInput, SignoffError, TooManySignIns, TooSoon
from .refusals import audit_refused_call

log = logging.getLogger("signoff.server")
UNEXPECTED = "InternalError"
"""The error type of a 500 nobody expected."""


class ErrorDetail(BaseModel):
    type: str
    """The error's class name: `AlreadyDecided`, `StoreUnavailable`, `InternalError`…"""
    message: str


class ErrorBody(BaseModel):
    """What every error answer carries."""

    error: ErrorDetail


def _answer(description: str) -> dict[str, Any]:
    return {"model": ErrorBody, "description": description}


API_ERRORS: dict[int | str, dict[str, Any]] = {
    401: _answer("`NotAuthenticated`: no credential, or one that is unknown, expired or revoked"),
    403: _answer("`PermissionDenied`, `NotAnApprover`: the caller may not do this"),
    404: _answer("`RequestNotFound`, `NotFound`: nothing by that name that the caller may see"),
    409: _answer(
        "`AlreadyDecided`, `RequestConflict`, `RequestNotReady`, an `ExecutionError`, an "
        "`UnattendedError`, `AuditBroken`, `AlreadyExists`, `Conflict`: the state of things does "
        "not allow it now"
    ),
    413: _answer("`PayloadTooLarge`: the body is over the server's limit; nothing was stored"),
    429: _answer(
        "`TooManySignIns`: too many failed sign-ins from this address of late; try again after "
        "`Retry-After` seconds"
    ),
    422: _answer(
        "`InvalidInput` (a malformed body or parameter, `IdempotencyKeyReused`), `ConfigError`, "
        "`InvalidDecision`: the message says what is wrong and where"
    ),
    503: _answer("`StoreUnavailable`: the store cannot be used now; try again later"),
}
"""The error answers every `/v1` route documents (each router's `responses=`): any of them
authenticates, is behind the Door (413, 422) and uses the store (503)."""
EXPIRED: dict[int | str, dict[str, Any]] = {
    410: _answer("`RequestExpired`: its deadline passed before anyone decided"),
}
"""What a route that decides, edits or runs a request may also answer."""


def error_body(kind: str, message: str) -> dict[str, dict[str, str]]:
    return {"error": {"type": kind, "message": message}}


def explain_validation(exc: RequestValidationError) -> str:
    problems = []
    for error in exc.errors():
        if error.get("type") == "json_invalid":
            return f"malformed JSON body: {error.get('ctx', {}).get('error', error['msg'])}"
        where = ".".join(str(part) for part in error.get("loc", ()) if part != "body") or "body"
        problems.append(f"{where}: {error['msg']}")
    return "invalid input: " + "; ".join(problems)


class UnexpectedErrors:
    """ASGI middleware: an exception no handler took becomes a JSON 500 (instead of Starlette's
    text/plain one, after which the server closes the connection), logged with its traceback.
    Once a response has started (a stream), an error can only end it: it is raised on."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = True
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception:
            if started:
                raise
            log.exception("unexpected error answering %s %s", scope.get("method"), scope.get("path"))
            message = "the server met an unexpected error; it has been logged"
            await JSONResponse(error_body(UNEXPECTED, message), 500)(scope, receive, send)


def install_error_handlers(app: FastAPI) -> None:
    async def signoff_error(request: HttpRequest, exc: Exception) -> JSONResponse:
        assert isinstance(exc, SignoffError)
        await audit_refused_call(request, exc)
        headers = {"WWW-Authenticate": "Bearer"} if exc.status_code == 401 else None
        if isinstance(exc, TooSoon | TooManySignIns) and exc.retry_after is not None:
            headers = {"Retry-After": str(max(1, math.ceil(exc.retry_after)))}
        if exc.status_code == 500:  # a store error that is not "try again later", and the like
            log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
        elif exc.status_code > 500:
            log.warning("%s %s: %s: %s", request.method, request.url.path, type(exc).__name__, exc.message)
        return JSONResponse(error_body(type(exc).__name__, exc.message), exc.status_code, headers=headers)

    async def validation_error(request: HttpRequest, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return JSONResponse(error_body(InvalidInput.__name__, explain_validation(exc)), 422)

    async def http_error(request: HttpRequest, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        kind = "NotFound" if exc.status_code == 404 else "HTTPError"
        return JSONResponse(error_body(kind, str(exc.detail)), exc.status_code, headers=exc.headers)

    app.add_exception_handler(SignoffError, signoff_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(HTTPException, http_error)
    app.add_middleware(UnexpectedErrors)
