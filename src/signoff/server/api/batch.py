"""`POST /v1/requests/decide`: one decision on several requests (see `signoff.batch`)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from fastapi.responses import Response
from pydantic import BaseModel, Field, model_validator

from ...batch import MAX_BATCH, BatchFilter, Selection, batch_decision, check_batch_ids
from ..access import authenticate
from ..context import server_of
from ..deciding import decide_batch_as
from ..errors import API_ERRORS
from ..idempotency import DOCUMENTED as IDEMPOTENT
from ..idempotency import Answer, answer_once
from .bodies import documented, read_body
from .models import Body
from .shown import shown_as

router = APIRouter(prefix="/v1/requests", tags=["requests"], responses=API_ERRORS)


class FilterBody(Body):
    """The open requests you may decide that match every field given (at least one)."""

    tool: str | None = Field(default=None, min_length=1, max_length=256)
    thread_id: str | None = Field(default=None, min_length=1, max_length=512)
    agent: str | None = Field(default=None, min_length=1, max_length=256)
    app: str | None = Field(default=None, min_length=1, max_length=256)


class BatchBody(Body):
    """One decision (approve or reject, with one reason) on the requests named by `ids` or
    matched by `filter` (exactly one of them)."""

    type: Literal["approve", "reject"]
    reason: str | None = Field(
        default=None,
        max_length=2000,
        description="The approval's comment, or the rejection's message (the model is told).",
    )
    ids: list[str] | None = Field(default=None, min_length=1, max_length=MAX_BATCH)
    filter: FilterBody | None = None

    @model_validator(mode="after")
    def _one_selection(self) -> BatchBody:
        if (self.ids is None) == (self.filter is None):
            raise ValueError("give either ids or filter")
        return self


class SkippedView(BaseModel):
    id: str
    reason: str = Field(description="Why it was not decided.")
    error: str = Field(description="The refusal's type: NotAnApprover, NotBatchable, AlreadyDecided, ...")


class BatchView(BaseModel):
    id: str = Field(description="The batch's id, in its `batch.decided` audit entry.")
    type: Literal["approve", "reject"]
    decided: list[str] = Field(description="The requests decided (a quorum's vote counts).")
    skipped: list[SkippedView]


@router.post(
    "/decide",
    summary=f"Decide several requests at once (at most {MAX_BATCH})",
    response_model=None,
    responses=shown_as(BatchView),
    openapi_extra={**documented(BatchBody), **IDEMPOTENT},
)
async def decide_many(http: HttpRequest) -> Response:
    """Each request is decided on its own, with the checks of a single decision; those that
    refuse it (not yours to decide, closed, expired, `batch: false` in their rule) are skipped
    and named with the reason. 403 for an agent; 422 for a bad body, an empty filter, or a
    filter matching more than the cap (nothing is decided then)."""
    caller = await authenticate(http)
    body = await read_body(http, BatchBody)
    decision = batch_decision(body.type, body.reason)
    selection: Selection
    if body.filter is not None:
        selection = BatchFilter(**body.filter.model_dump(exclude_none=True))
    else:
        selection = check_batch_ids(body.ids)
    server = server_of(http)

    def work() -> Answer:
        result = decide_batch_as(server, selection, decision, caller.user, channel=caller.channel)
        return Answer(result.to_dict())

    return await answer_once(http, caller, work)
