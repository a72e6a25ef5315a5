"""JSON bodies read by the endpoint itself, for the hottest endpoints.

FastAPI's per-request dependency solving (body, content type, caches) costs more CPU than the
decision it carries. These endpoints take the raw request, read the body with the model's
own JSON parser, and document it with `openapi_extra=documented(Model)`, the way FastAPI's
docs describe for a body it does not parse. A bad body gets the same 422 as any other.
"""

from __future__ import annotations

from typing import Any, TypeVar

from fastapi import Request as HttpRequest
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


async def read_body(http: HttpRequest, model: type[M]) -> M:
    """The request's JSON body as `model`; RequestValidationError (422) if it is not one."""
    raw = await http.body()
    try:
        return model.model_validate_json(raw or b"null")
    except ValidationError as exc:
        problems = [{**error, "loc": ("body", *error["loc"])} for error in exc.errors(include_url=False)]
        raise RequestValidationError(problems) from None


def documented(model: type[BaseModel]) -> dict[str, Any]:
    """`openapi_extra` that documents `model` as the required JSON request body."""
    return {
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": model.model_json_schema(ref_template="#/components/schemas/{model}")
                }
            },
        }
    }
