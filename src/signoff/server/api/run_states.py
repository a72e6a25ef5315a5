"""`/v1/threads/{thread_id}/run-state`: a paused agent run's saved state, kept for the agent.

The state of a framework's paused run (the OpenAI Agents SDK's `RunState`) holds the model's
tool calls and their arguments, so it stays on the server, not with whoever drives the run.
Each agent's user has its own: saving, reading and deleting are keyed by the token's user, so
only the agent that saved a thread's state can read it (people cannot; they see the requests).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Response
from fastapi import Request as HttpRequest
from pydantic import Field

from ...errors import PermissionDenied
from ...identity import User
from ...store.run_state_ops import RunStateRecord
from ..access import CurrentUser
from ..context import server_of
from ..errors import API_ERRORS
from .models import Body
from .shown import ShownAs
from .views import KeptRunState, RunStateView

router = APIRouter(prefix="/v1/threads", tags=["agents"], responses=API_ERRORS)


class RunStateBody(Body):
    kind: str = Field(
        min_length=1, max_length=100, description='Whose format `state` is, e.g. "openai-agents".'
    )
    state: str = Field(description="The framework's serialized run state, kept as given.")


def _agent_or_admin(user: User) -> None:
    if user.role == "member":
        raise PermissionDenied(f"{user.name} is a person; run states are kept for agents")


def _view(record: RunStateRecord) -> dict[str, Any]:
    return {
        "thread_id": record.thread_id,
        "kind": record.kind,
        "created_by": record.created_by,
        "state": record.state,
        "created_at": record.created_at.isoformat(),
        "updated_at": record.updated_at.isoformat(),
    }


@router.put("/{thread_id}/run-state", summary="Keep your paused run's state (replacing the one kept)")
def save_run_state(
    thread_id: str, body: RunStateBody, http: HttpRequest, user: CurrentUser
) -> Annotated[dict[str, Any], ShownAs(RunStateView)]:
    _agent_or_admin(user)
    store = server_of(http).store
    return _view(store.save_run_state(thread_id, body.state, kind=body.kind, created_by=user.name))


@router.get("/{thread_id}/run-state", summary="Your paused run's state, if one is kept")
def load_run_state(
    thread_id: str, http: HttpRequest, user: CurrentUser
) -> Annotated[dict[str, Any], ShownAs(KeptRunState)]:
    """`run_state` is null when you keep none for this thread (another agent's is never shown)."""
    _agent_or_admin(user)
    record = server_of(http).store.load_run_state(thread_id, created_by=user.name)
    return {"run_state": _view(record) if record is not None else None}


@router.delete(
    "/{thread_id}/run-state", status_code=204, response_class=Response, summary="Forget your run's state"
)
def delete_run_state(thread_id: str, http: HttpRequest, user: CurrentUser) -> Response:
    _agent_or_admin(user)
    server_of(http).store.delete_run_state(thread_id, created_by=user.name)
    return Response(status_code=204)
