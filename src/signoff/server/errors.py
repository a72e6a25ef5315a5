"""Every error as JSON: `{"error": {"type": ..., "message": ...}}` with the error's status code.

signoff's own errors carry their status (a store that cannot write now is `StoreUnavailable`,
503); an exception nobody expected is a 500 with the same body, logged with its traceback.
Either way the answer is a complete response and the HTTP connection stays open. Refusals (401,
403) are audited on the way out (see `refusals`).
"""

from __future__ import annotations

import logging

from fastapi import FastAPI
from fastapi import Request as HttpRequest
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import InvalidInput, SignoffError
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
