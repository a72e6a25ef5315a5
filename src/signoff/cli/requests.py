"""Looking at requests and looking after them: pending, show, cancel, executions, rerun, sweep."""

from __future__ import annotations

from typing import Annotated

import typer

from ..request_steps import steps_summary
from ..requests import ExecutionStatus, RequestStatus
from . import render
from .options import AsUser, JsonFlag, RequestId
from .state import acting_user, local_store_of, store_of
from .text import Readout

OPEN_STATUSES = [RequestStatus.PENDING.value, RequestStatus.DRAFTING.value]


def pending(
    ctx: typer.Context,
    tool: Annotated[str | None, typer.Option(help="Only this tool.")] = None,
    agent: Annotated[str | None, typer.Option(help="Only this agent.")] = None,
    app: Annotated[str | None, typer.Option(help="Only this app.")] = None,
    thread: Annotated[str | None, typer.Option(help="Only this thread (run).")] = None,
    as_user: AsUser = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="At most this many.")] = 50,
    as_json: JsonFlag = False,
) -> None:
    """Open requests (pending and drafting) that you may decide, newest first."""
    requests = store_of(ctx).list_requests(
        status=OPEN_STATUSES,
        tool=tool,
        agent=agent,
        app=app,
        thread_id=thread,
        visible_to=acting_user(ctx, as_user),
        limit=limit,
    )
    if as_json:
        render.print_json([request.to_dict() for request in requests])
    else:
        render.pending_table(requests)


def show(
    ctx: typer.Context,
    request_id: RequestId,
    as_user: AsUser = None,
    as_json: JsonFlag = False,
) -> None:
    """A request, its decisions, its execution and its audit trail (approvers only)."""
    store = store_of(ctx)
    request = store.get_request_for(request_id, acting_user(ctx, as_user), channel="cli")
    decisions = store.decisions(request_id)
    execution = store.get_execution(request_id)
    audit = list(store.audit_entries(request_id=request_id))
    steps = store.steps_of(request_id)
    if as_json:
        render.print_json(
            {
                "request": request.to_dict(),
                "decisions": [record.to_dict(request.rule.redact) for record in decisions],
                "execution": execution.to_dict() if execution is not None else None,
                "audit": [entry.to_dict() for entry in audit],
                "steps": [step.to_dict() for step in steps],
            }
        )
    else:
        render.request_details(request, decisions, execution, audit, steps_said=steps_summary(steps))


def cancel(
    ctx: typer.Context,
    request_id: RequestId,
    reason: Annotated[str | None, typer.Option(help="Why; the model is told.")] = None,
    as_user: AsUser = None,
) -> None:
    """Cancel an open request (the run it belongs to is abandoned)."""
    actor = acting_user(ctx, as_user)
    request = store_of(ctx).cancel_as_person(request_id, actor=actor, channel="cli", reason=reason)
    render.decided(request)


TO_CHECK = [ExecutionStatus.IN_DOUBT, ExecutionStatus.ABANDONED]


def executions(
    ctx: typer.Context,
    status: Annotated[
        list[ExecutionStatus] | None,
        typer.Option(help="Only this state (repeatable); default: in_doubt and abandoned."),
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="At most this many per state.")] = 50,
    as_json: JsonFlag = False,
) -> None:
    """Tool calls for a person to check: in doubt (their process stopped while running the tool)
    and abandoned (approved, and the process waiting to run them stopped first), newest first."""
    store = store_of(ctx)
    found = [
        (execution, store.get_request(execution.request_id))
        for wanted in status or TO_CHECK
        for execution in store.list_executions(status=wanted, limit=limit)
    ]
    if as_json:
        render.print_json(
            [{"request": request.to_dict(), "execution": execution.to_dict()} for execution, request in found]
        )
    else:
        render.executions_table(found)


def rerun(
    ctx: typer.Context,
    request_id: RequestId,
    as_user: AsUser = None,
) -> None:
    """Let an in_doubt, failed or abandoned execution run (again): the next replay of the call runs
    the tool."""
    actor = acting_user(ctx, as_user)
    execution = store_of(ctx).rerun_as_person(request_id, actor=actor, channel="cli")
    render.console().print(
        f"Execution of {request_id} is now {execution.status.value} "
        f"(attempts so far: {execution.attempts}); the next replay of the call runs the tool again."
    )


def sweep(ctx: typer.Context) -> None:
    """Expire every open request whose deadline has passed, and send the reminders and
    escalations that are due."""
    store = local_store_of(ctx, "sweep")
    expired = store.expire_due()
    stepped = store.run_due_steps()
    out = render.console()
    readout = Readout()
    out.print(f"Expired {len(expired)} request(s).")
    if stepped:
        out.print(f"Ran {len(stepped)} reminder and escalation step(s).")
    for request in expired:
        tool = readout.text(request.tool_name, f"request {request.id}: tool")
        out.print(f"  {request.id}  {tool}  (on_expire: {request.rule.on_expire})", soft_wrap=True)
    render.warn(out, readout)
