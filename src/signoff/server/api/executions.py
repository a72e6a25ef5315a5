"""`/v1/executions`: executions by status, above all the ones in doubt, for people to look at."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi import Request as HttpRequest

from ...requests import ExecutionStatus
from ..access import CurrentUser, request_view
from ..context import server_of
from ..errors import API_ERRORS
from ..executions import visible_executions
from .request_views import ExecutionPage
from .shown import ShownAs

router = APIRouter(prefix="/v1/executions", tags=["executions"], responses=API_ERRORS)


@router.get("", summary="Executions in one status (default: in doubt), newest request first")
def list_executions(
    http: HttpRequest,
    user: CurrentUser,
    status: Annotated[
        ExecutionStatus,
        Query(
            description="in_doubt: the process stopped while running the tool, which may or may not "
            "have taken effect; a person checks, then lets it run again or leaves it."
        ),
    ] = ExecutionStatus.IN_DOUBT,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(description="`next_cursor` of the previous page.")] = None,
) -> Annotated[dict[str, Any], ShownAs(ExecutionPage)]:
    """Only executions of requests the caller may see. To let an in-doubt or failed call run
    again: `POST /v1/requests/{id}/execution` with `{"action": "reset"}` (people only)."""
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
