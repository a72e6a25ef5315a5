"""`signoff approve --all` / `signoff reject --all`: one decision on every open request a filter
matches (tool, thread, agent, app) that you may decide, after a confirmation naming how many.

The requests are listed first and the batch decides exactly those (a request that arrives after
the confirmation is not in it); the batch itself is `signoff.batch`'s, locally or on the server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, cast

import typer

from ..batch import MAX_BATCH, BatchDecisionType, BatchFilter, BatchResult, batch_decision, decide_batch
from ..errors import InvalidInput
from ..requests import RequestStatus
from .render import console
from .state import CliError, CliInputError, acting_user, state_of, store_of

if TYPE_CHECKING:
    from ..client import Client
    from ..store import Store

DecideAll = Annotated[
    bool,
    typer.Option(
        "--all",
        help="Decide every open request you may decide that matches --tool, --thread, --agent and "
        f"--app (at least one; at most {MAX_BATCH}), instead of one ID.",
    ),
]
ToolFilter = Annotated[str | None, typer.Option("--tool", help="With --all: this tool's requests.")]
ThreadFilter = Annotated[str | None, typer.Option("--thread", help="With --all: this thread's requests.")]
AgentFilter = Annotated[str | None, typer.Option("--agent", help="With --all: this agent's requests.")]
AppFilter = Annotated[str | None, typer.Option("--app", help="With --all: this app's requests.")]
Yes = Annotated[bool, typer.Option("--yes", help="With --all: do not ask for confirmation.")]


def refuse_filters_without_all(*given: str | None) -> None:
    if any(value is not None for value in given):
        raise CliInputError("--tool, --thread, --agent and --app choose requests for --all; give --all too")


def decide_all(
    ctx: typer.Context,
    kind: BatchDecisionType,
    reason: str | None,
    chosen: dict[str, str | None],
    *,
    yes: bool,
    as_user: str | None,
) -> None:
    """List what `chosen` matches, confirm the count, then decide exactly those."""
    try:
        selection = BatchFilter(**chosen)
    except InvalidInput:
        raise CliInputError("--all needs at least one of --tool, --thread, --agent, --app") from None
    decision = batch_decision(kind, reason)
    store = store_of(ctx)
    remote = state_of(ctx).remote  # not isinstance(store, Client): that would import the client
    actor = acting_user(ctx, as_user)
    visible_to = None if remote else actor
    found = store.list_requests(
        status=RequestStatus.PENDING.value, limit=MAX_BATCH + 1, visible_to=visible_to, **selection.to_dict()
    )
    what = ", ".join(f"{name} {value}" for name, value in selection.to_dict().items())
    if not found:
        console().print(f"No open request you may decide matches {what}; nothing {kind}d.")
        return
    if len(found) > MAX_BATCH:
        raise CliInputError(f"more than {MAX_BATCH} open requests match {what}; narrow the filter")
    ids = [request.id for request in found]
    verb = "Approve" if kind == "approve" else "Reject"
    if not yes and not typer.confirm(f"{verb} {len(ids)} request(s) matching {what}?", default=False):
        raise CliError(f"nothing {kind}d")
    if remote:
        result = cast("Client", store).decide_many(ids, kind, reason=reason)
    else:
        local = cast("Store", store)
        result = decide_batch(
            local,
            ids,
            decision,
            actor=actor,
            channel="cli",
            visible=lambda request_id: local.get_request_for(request_id, actor, channel="cli"),
            listing={"visible_to": actor},
            decide_one=lambda request_id, one: local.decide_as_person(
                request_id, one, actor=actor, channel="cli"
            ),
        )
    _show(result)


def _show(result: BatchResult) -> None:
    out = console()
    done = "approved" if result.type == "approve" else "rejected"
    out.print(f"Batch {result.id}: {len(result.decided)} {done}, {len(result.skipped)} skipped.")
    for request_id in result.decided:
        out.print(f"  {done}: {request_id}", markup=False)
    for skip in result.skipped:
        out.print(f"  skipped {skip.request_id}: {skip.reason}", soft_wrap=True, markup=False)
