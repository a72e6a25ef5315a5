"""Every error as JSON: `{"error": {"type": ..., "message": ...}}` with the error's status code.
Refusals (401, 403) are audited on the way out (see `refusals`)."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi import Request as HttpRequest
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from ..errors import InvalidInput, SignoffError
from .refusals import audit_refused_call


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


def install_error_handlers(app: FastAPI) -> None:
    async def signoff_error(request: HttpRequest, exc: Exception) -> JSONResponse:
        assert isinstance(exc, SignoffError)
        await audit_refused_call(request, exc)
        headers = {"WWW-Authenticate": "Bearer"} if exc.status_code == 401 else None
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
