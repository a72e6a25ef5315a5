"""What an agent's gate needs besides requests: AskOnce memory, per-run counters, cancelling a
run, and the event stream."""

from __future__ import annotations

import asyncio
import logging
from typing import Annotated

from fastapi import APIRouter, Header, Query, Response
from fastapi import Request as HttpRequest
from fastapi.responses import StreamingResponse

from ...errors import NotAuthenticated, PermissionDenied
from ...identity import User
from ...store import Store
from ..access import SESSION_COOKIE, Caller, CurrentCaller, CurrentUser, identify
from ..context import server_of
from ..errors import API_ERRORS
from ..events import Event, parse_last_event_id
from ..idempotency import DOCUMENTED as IDEMPOTENT
from ..idempotency import Answer, answer_once
from ..limits import MAX_INTEGER
from .models import MemoryBody, ThreadCancelBody
from .request_views import CancelledCount
from .shown import ShownAs, shown_as
from .views import Count, Remembered

router = APIRouter(prefix="/v1", tags=["agents"], responses=API_ERRORS)
log = logging.getLogger("signoff.server")


def _note_shown(store: Store, request_id: str, user_name: str) -> None:
    try:
        store.record_delivery(
            request_id, channel="web", target=user_name, result="sent", detail="shown live in the inbox"
        )
    except Exception:
        log.exception("could not record the inbox delivery of %s", request_id)


def _agent_or_admin(user: User) -> None:
    if user.role == "member":
        raise PermissionDenied(f"{user.name} is a person; this is for agents")


@router.post("/memory", status_code=204, response_class=Response, summary="Remember an approval (AskOnce)")
def remember(body: MemoryBody, http: HttpRequest, user: CurrentUser) -> Response:
    _agent_or_admin(user)
    server_of(http).store.remember(f"{user.name}:{body.scope_key}", body.fingerprint)
    return Response(status_code=204)


@router.get("/memory", summary="Was this approved before (AskOnce)?")
def recall(
    http: HttpRequest, user: CurrentUser, scope_key: str, fingerprint: str
) -> Annotated[dict[str, bool], ShownAs(Remembered)]:
    _agent_or_admin(user)
    return {"remembered": server_of(http).store.recall(f"{user.name}:{scope_key}", fingerprint)}


@router.get("/threads/{thread_id}/auto-decisions", summary="How many unattended decisions your run made")
def auto_decisions(
    thread_id: str, http: HttpRequest, user: CurrentUser
) -> Annotated[dict[str, int], ShownAs(Count)]:
    """Thread ids are per agent: this counts only the requests you created in that thread."""
    _agent_or_admin(user)
    return {"count": server_of(http).store.count_auto_decisions(thread_id, created_by=user.name)}


@router.get("/threads/{thread_id}/auto-rounds", summary="How many rounds your run had auto-decided")
def auto_rounds(
    thread_id: str, http: HttpRequest, user: CurrentUser, besides: str | None = None
) -> Annotated[dict[str, int], ShownAs(Count)]:
    """The rounds (model turns) of your unattended decisions in that thread, other than `besides`:
    what `max_auto_resume` caps. A request created without a round is a round alone."""
    _agent_or_admin(user)
    store = server_of(http).store
    return {"count": store.count_auto_rounds(thread_id, besides=besides, created_by=user.name)}


@router.post(
    "/threads/{thread_id}/cancel",
    summary="Cancel your run's open requests",
    response_model=None,
    responses=shown_as(CancelledCount),
    openapi_extra=IDEMPOTENT,
)
async def cancel_thread(
    thread_id: str, http: HttpRequest, caller: CurrentCaller, body: ThreadCancelBody | None = None
) -> Response:
    store = server_of(http).store
    reason = body.reason if body else None
    return await answer_once(http, caller, lambda: Answer(_cancel_thread(store, thread_id, caller, reason)))


def _cancel_thread(store: Store, thread_id: str, caller: Caller, reason: str | None) -> dict[str, int]:
    """Thread ids are per agent: this cancels only the requests the caller created in that thread."""
    user = caller.user
    _agent_or_admin(user)
    cancelled = store.cancel_thread(
        thread_id, actor=user.name, channel=caller.channel, reason=reason, created_by=user.name
    )
    return {"cancelled": cancelled}


@router.get(
    "/events",
    summary="Server-Sent Events: created, updated, decided, expired, cancelled",
    # A response class without a media type, so that the errors stay documented as JSON.
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "The event stream",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        }
    },
)
async def events(
    http: HttpRequest,
    caller: CurrentCaller,
    last_event_id: Annotated[str | None, Header()] = None,
    after: Annotated[
        int | None,
        Query(ge=0, le=MAX_INTEGER, description="Resume after this event id (like Last-Event-ID)."),
    ] = None,
) -> StreamingResponse:
    """Only requests you may see. Each event's id is its audit sequence number: reconnect with
    `Last-Event-ID` (or `?after=`) to get what you missed. The stream ends when you read too
    slowly, and when your token or session stops being valid (checked every few seconds and
    before each event); reconnect to resume."""
    server = server_of(http)
    credentials = (http.headers.get("authorization"), http.cookies.get(SESSION_COOKIE))

    async def check_caller() -> User | None:
        try:
            return (await identify(server, *credentials)).user
        except NotAuthenticated:
            return None

    resume = parse_last_event_id(last_event_id)
    if resume is None:
        resume = after
    on_created = None
    if caller.session is not None:
        user_name = caller.user.name

        def on_created(event: Event) -> None:
            asyncio.get_running_loop().run_in_executor(
                None, _note_shown, server.store, event.request.id, user_name
            )

    return StreamingResponse(
        server.feed.stream(caller.user, after=resume, on_created=on_created, check_caller=check_caller),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
