"""`/v1/requests`: ask, list, read, decide, cancel, stream drafts, long-poll. A request's
execution (`/v1/requests/{id}/execution`) is in `executions`."""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi import Request as HttpRequest
from fastapi.responses import Response

from ..._util import parse_duration, utcnow
from ...errors import ConfigError, InvalidInput, PermissionDenied, RequestConflict
from ...identity import User
from ...request_steps import steps_summary
from ...requests import NewRequest, Request, RequestStatus
from ...rules.model import RequestRule
from ...rules.snapshot import parse_snapshot
from ...running import jsonable
from ...templates import render_description
from ...validation import check_schema
from ...visible import check_name
from ...waiting import watch_async
from ..access import (
    CurrentCaller,
    CurrentUser,
    authenticate,
    listing_filter,
    managed_request,
    request_view,
    visible_request,
)
from ..context import Server, server_of
from ..deciding import decide_as
from ..errors import API_ERRORS, EXPIRED
from ..idempotency import DOCUMENTED as IDEMPOTENT
from ..idempotency import Answer, answer_once
from ..refusals import audit_refusal
from ..request_rules import governed_rule
from ..routing import direct
from .bodies import documented, read_body
from .models import CancelBody, DecisionBody, DraftBody, NewRequestBody
from .request_views import (
    DecisionView,
    DeliveryView,
    RequestPage,
    RequestView,
)
from .shown import ShownAs, shown_as
from .views import AuditEntryView

router = APIRouter(prefix="/v1/requests", tags=["requests"], responses=API_ERRORS)
RequestJSON = Annotated[dict[str, Any], ShownAs(RequestView)]
SENDS_REQUEST = shown_as(RequestView)

MAX_WAIT_SECONDS = 60.0


@router.post(
    "",
    status_code=201,
    summary="Ask for a decision (get-or-create)",
    response_model=None,
    responses={
        **shown_as(RequestView, 201, "The new request"),
        **shown_as(RequestView, 200, "The request you created before for the same call"),
    },
    openapi_extra={**documented(NewRequestBody), **IDEMPOTENT},
)
@direct
async def create_request(http: HttpRequest) -> Response:
    """201 with the new request, or 200 with the one you created before for the same
    (thread_id, tool_call_id): each agent has its own thread ids."""
    caller = await authenticate(http)
    body = await read_body(http, NewRequestBody)
    server = server_of(http)
    user = caller.user
    if user.role == "member":
        raise PermissionDenied(f"{user.name} is a person; requests are created by agents (or admins)")
    return await answer_once(http, caller, lambda: _create(server, body, user, caller.channel, caller.owner))


def _create(server: Server, body: NewRequestBody, user: User, channel: str, owner: str | None) -> Answer:
    request, created = _get_or_create(server, body, user, owner)
    if not created and request.tool_name != body.tool:
        conflict = RequestConflict(
            f"tool_call_id {body.tool_call_id!r} in thread {body.thread_id!r} already belongs to a "
            f"call of {request.tool_name!r}, not {body.tool!r}"
        )
        data = {"tool": body.tool, "thread_id": body.thread_id, "tool_call_id": body.tool_call_id}
        raise audit_refusal(
            server.store,
            conflict,
            actor=user.name,
            channel=channel,
            request_id=request.id,
            action="request.create_refused",
            data=data,
        )
    return Answer(request_view(request, user), 201 if created else 200)


def _get_or_create(
    server: Server, body: NewRequestBody, user: User, owner: str | None
) -> tuple[Request, bool]:
    new, declared = _new_request(server, body, user, owner)
    store = server.store
    request, created = store.create_request(new)
    if created:
        store.on_commit(lambda: server.feed.remember("request.created", request))
        if declared is not None and server.declared.due(user.name, body.tool, body.agent, body.app, declared):
            store.note_declared_rule(
                created_by=user.name, tool=body.tool, agent=body.agent, app=body.app, rule=declared
            )
    return request, created


def _new_request(
    server: Server, body: NewRequestBody, user: User, owner: str | None
) -> tuple[NewRequest, RequestRule | None]:
    """The request to create, and the rule the agent sent (its own declaration), if any; `owner`
    owns the token the agent asked with (four eyes may keep them from approving)."""
    for schema in (body.args_schema, body.answer_schema):
        if schema is not None:
            check_schema(schema)
    try:
        deadline = parse_duration(body.deadline) if body.deadline is not None else None
        snapshot = parse_snapshot(body.rule) if body.rule is not None else None
        approvers = tuple(check_name(name, "approvers entry") for name in body.approvers or ())
    except ValueError as exc:
        raise InvalidInput(f"deadline: {exc}") from None
    except ConfigError as exc:
        raise InvalidInput(exc.message) from None
    explanation = server.resolver().explain(
        body.tool, body.agent, body.app, body.args, body.requester, body.tool_annotations
    )
    governed = governed_rule(
        explanation,
        snapshot=snapshot,
        kind=body.kind,
        approvers=approvers,
        deadline=deadline,
        agent_rules=server.settings.agent_rules,
    )
    rule = governed.rule
    description = body.description
    if description is None:
        description = render_description(
            rule.description,
            tool_name=body.tool,
            args=body.args,
            redact=rule.redact,
            prefix=rule.description_prefix,
        )
    new = NewRequest(
        thread_id=body.thread_id,
        tool_call_id=body.tool_call_id,
        tool_name=body.tool,
        args=jsonable(body.args),
        description=description,
        deadline=utcnow() + governed.deadline,
        rule=rule,
        kind=body.kind,
        tool_description=body.tool_description,
        args_schema=body.args_schema,
        answer_schema=body.answer_schema,
        agent=body.agent,
        app=body.app,
        requester=body.requester,
        round=body.round,
        client=body.client,
        tool_annotations=body.tool_annotations,
        runner=body.runner,
        drafting=body.drafting,
        actor=user.name,
        creator_owner=owner,
        channel="api",
    )
    return new, snapshot


@router.get("", summary="List the requests you may see, newest first")
def list_requests(
    http: HttpRequest,
    user: CurrentUser,
    status: Annotated[str | None, Query(description="One or more statuses, comma-separated.")] = None,
    tool: str | None = None,
    agent: str | None = None,
    app: str | None = None,
    approver: str | None = None,
    thread: Annotated[str | None, Query(alias="thread_id")] = None,
    tool_call_id: str | None = None,
    q: Annotated[str | None, Query(description="Search tool, description, thread and agent.")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    cursor: str | None = None,
) -> Annotated[dict[str, Any], ShownAs(RequestPage)]:
    statuses = None
    if status:
        statuses = [part.strip() for part in status.split(",") if part.strip()]
        unknown = [part for part in statuses if part not in RequestStatus.__members__.values()]
        if unknown:
            raise InvalidInput(
                f"unknown status {', '.join(unknown)}; use {', '.join(s.value for s in RequestStatus)}"
            )
    store = server_of(http).store
    items = store.list_requests(
        status=statuses,
        tool=tool,
        agent=agent,
        app=app,
        approver=approver,
        thread_id=thread,
        tool_call_id=tool_call_id,
        search=q,
        limit=limit + 1,
        cursor=cursor,
        **listing_filter(user),
    )
    more = len(items) > limit
    items = items[:limit]
    return {
        "items": [request_view(request, user, brief=True) for request in items],
        "next_cursor": items[-1].id if more and items else None,
    }


@router.get("/{request_id}", summary="One request")
def get_request(request_id: str, http: HttpRequest, caller: CurrentCaller) -> RequestJSON:
    store = server_of(http).store
    request = visible_request(store, request_id, caller.user, channel=caller.channel)
    view = request_view(request, caller.user)
    steps = store.steps_of(request_id)
    view["steps"] = [step.to_dict() for step in steps]
    view["steps_summary"] = steps_summary(steps)
    return view


@router.post(
    "/{request_id}/decision",
    summary="Decide: approve, edit, reject or respond",
    response_model=None,
    responses={**EXPIRED, **SENDS_REQUEST},
    openapi_extra={**documented(DecisionBody), **IDEMPOTENT},
)
@direct
async def decide(request_id: str, http: HttpRequest) -> Response:
    """200 decided; 403 not an approver; 404; 409 already decided or still drafting; 410 expired;
    422 a type the rule does not allow, args breaking the tool's schema, or a malformed body."""
    caller = await authenticate(http)
    body = await read_body(http, DecisionBody)
    payload = body.model_dump(exclude={"on_behalf"})
    payload = {key: value for key, value in payload.items() if value is not None or key == "type"}
    server = server_of(http)
    unattended = body.on_behalf == "unattended"

    def work() -> Answer:
        request = decide_as(
            server, request_id, payload, caller.user, channel=caller.channel, unattended=unattended
        )
        return Answer(request_view(request, caller.user))

    return await answer_once(http, caller, work)


@router.post(
    "/{request_id}/cancel",
    summary="Cancel an open request",
    response_model=None,
    responses=SENDS_REQUEST,
    openapi_extra=IDEMPOTENT,
)
async def cancel(
    request_id: str, http: HttpRequest, caller: CurrentCaller, body: CancelBody | None = None
) -> Response:
    store = server_of(http).store

    def work() -> Answer:
        managed_request(store, request_id, caller.user, what="cancel", channel=caller.channel)
        request = store.cancel(
            request_id, actor=caller.user.name, channel=caller.channel, reason=body.reason if body else None
        )
        return Answer(request_view(request, caller.user))

    return await answer_once(http, caller, work)


@router.patch(
    "/{request_id}",
    summary="Append streamed args to a draft, or mark it ready",
    response_model=None,
    responses=SENDS_REQUEST,
    openapi_extra=IDEMPOTENT,
)
async def update_draft(
    request_id: str, body: DraftBody, http: HttpRequest, caller: CurrentCaller
) -> Response:
    store = server_of(http).store

    def work() -> Answer:
        managed_request(store, request_id, caller.user, what="update the draft of", channel=caller.channel)
        request = store.update_draft(
            request_id, args=body.args, ready=body.ready, actor=caller.user.name, channel=caller.channel
        )
        return Answer(request_view(request, caller.user))

    return await answer_once(http, caller, work)


@router.get("/{request_id}/wait", summary="Long-poll: return as soon as the request is decided")
async def wait(
    request_id: str,
    http: HttpRequest,
    caller: CurrentCaller,
    timeout: Annotated[float, Query(ge=0, le=MAX_WAIT_SECONDS)] = 30.0,
) -> RequestJSON:
    """Returns the request when it is decided, expired or cancelled, or, after `timeout`
    seconds, as it is then (still pending: ask again)."""
    server = server_of(http)
    await server.run(visible_request, server.store, request_id, caller.user, channel=caller.channel)
    request = await watch_async(
        server.store,
        request_id,
        give_up=time.monotonic() + timeout,
        poll_interval=server.settings.wait_recheck,
        run=server.run,
    )
    return request_view(request, caller.user)


@router.get("/{request_id}/decisions", summary="Every decision on a request (a quorum's votes)")
def decisions(
    request_id: str, http: HttpRequest, caller: CurrentCaller
) -> Annotated[list[dict[str, Any]], ShownAs(list[DecisionView])]:
    store = server_of(http).store
    request = visible_request(store, request_id, caller.user, channel=caller.channel)
    return [record.to_dict(request.rule.redact) for record in store.decisions(request_id)]


@router.get("/{request_id}/audit", summary="A request's audit trail")
def request_audit(
    request_id: str, http: HttpRequest, caller: CurrentCaller
) -> Annotated[list[dict[str, Any]], ShownAs(list[AuditEntryView])]:
    store = server_of(http).store
    visible_request(store, request_id, caller.user, channel=caller.channel)
    return [entry.to_dict() for entry in store.audit_entries(request_id=request_id)]


@router.get("/{request_id}/deliveries", summary="Where the request was shown or sent")
def request_deliveries(
    request_id: str, http: HttpRequest, caller: CurrentCaller
) -> Annotated[list[dict[str, Any]], ShownAs(list[DeliveryView])]:
    store = server_of(http).store
    visible_request(store, request_id, caller.user, channel=caller.channel)
    return [delivery.to_dict() for delivery in store.deliveries_for(request_id)]
