"""Executions: `/v1/executions` (by status, above all the ones in doubt, for people to look at)
and one request's, `/v1/requests/{id}/execution` (read it; claim, renew, finish or reset it)."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi import Request as HttpRequest
from fastapi.responses import Response

from ...errors import InvalidInput, RequestConflict
from ...execution import may_run
from ...requests import ExecutionStatus
from ...store import Store
from ..access import Caller, CurrentCaller, CurrentUser, managed_request, request_view, visible_request
from ..context import server_of
from ..errors import API_ERRORS
from ..executions import rerun_as, visible_executions
from ..idempotency import DOCUMENTED as IDEMPOTENT
from ..idempotency import Answer, answer_once
from .models import ExecutionBody
from .request_views import ExecutionActionAnswer, ExecutionPage, ExecutionView
from .shown import ShownAs, shown_as

router = APIRouter(prefix="/v1/executions", tags=["executions"], responses=API_ERRORS)
per_request = APIRouter(prefix="/v1/requests", tags=["requests"], responses=API_ERRORS)


@router.get("", summary="Executions in one status (default: in doubt), newest request first")
def list_executions(
    http: HttpRequest,
    user: CurrentUser,
    status: Annotated[
        ExecutionStatus,
        Query(
            description="in_doubt: the process stopped while running the tool, which may or may not "
            "have taken effect; a person checks, then lets it run again or leaves it. abandoned: "
            "approved, and the process waiting to run it stopped before it did (nothing ran; a "
            "replay of the call runs it)."
        ),
    ] = ExecutionStatus.IN_DOUBT,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(description="`next_cursor` of the previous page.")] = None,
) -> Annotated[dict[str, Any], ShownAs(ExecutionPage)]:
    """Only executions of requests the caller may see. To let an in-doubt, failed or abandoned
    call run (again): `POST /v1/requests/{id}/execution` with `{"action": "reset"}` (people only)."""
    views, next_cursor = visible_executions(
        server_of(http).store, user, status=status, limit=limit, cursor=cursor
    )
    return {
        "items": [
            {
                "request_id": view.request.id,
                "execution": view.execution.to_dict(),
                "request": request_view(view.request, user),
            }
            for view in views
        ],
        "next_cursor": next_cursor,
    }


@per_request.get("/{request_id}/execution", summary="The execution record (null before any)")
def get_execution(
    request_id: str, http: HttpRequest, caller: CurrentCaller
) -> Annotated[dict[str, Any] | None, ShownAs(ExecutionView | None)]:
    store = server_of(http).store
    visible_request(store, request_id, caller.user, channel=caller.channel)
    execution = store.get_execution(request_id)
    return execution.to_dict() if execution is not None else None


@per_request.post(
    "/{request_id}/execution",
    summary="Claim, renew, finish or reset the execution",
    response_model=None,
    responses=shown_as(ExecutionActionAnswer),
    openapi_extra=IDEMPOTENT,
)
async def execution(
    request_id: str, body: ExecutionBody, http: HttpRequest, caller: CurrentCaller
) -> Response:
    """`claim` (the agent, before running the tool: `claimed` with a token, or the state someone
    else left), `renew` the lease, `finish` with the result, or `reset` an in_doubt, failed or
    abandoned run (a person, so that the next replay runs it)."""
    store = server_of(http).store
    return await answer_once(http, caller, lambda: Answer(_execution(store, request_id, body, caller)))


def _execution(store: Store, request_id: str, body: ExecutionBody, caller: Caller) -> dict[str, Any]:
    user = caller.user
    lease = timedelta(seconds=body.lease_seconds)
    if body.action == "reset":
        return {"execution": rerun_as(store, request_id, user, channel=caller.channel).to_dict()}
    managed_request(store, request_id, user, what="run", channel=caller.channel)
    if body.action == "claim":
        request = store.get_request(request_id)
        if not may_run(request):
            raise RequestConflict(
                f"request {request_id} is {request.status}; only approved or edited calls run "
                "(or expired ones whose rule approves at expiry)"
            )
        if not body.args_digest:
            raise InvalidInput(
                "claim needs args_digest: the sha256 of the args the call will run with "
                "(signoff.args_digest), so that an approval runs only the args it was given for"
            )
        claim = store.claim_execution(
            request_id,
            lease=lease,
            args_digest=body.args_digest,
            idempotent=body.idempotent,
            owner=body.owner,
        )
        return {"kind": claim.kind, "token": claim.token, "execution": _execution_record(claim.execution)}
    if not body.token:
        raise InvalidInput(f"{body.action} needs the claim's token")
    if body.action == "renew":
        return {"renewed": store.renew_lease(request_id, body.token, lease=lease)}
    if body.succeeded is None:
        raise InvalidInput("finish needs succeeded: true or false")
    finished = store.finish_execution(
        request_id, body.token, succeeded=body.succeeded, result=body.result, error=body.error
    )
    return {"execution": _execution_record(finished)}


def _execution_record(execution: Any) -> dict[str, Any]:
    record: dict[str, Any] = execution.to_dict()
    record["owner"] = execution.owner
    return record
