"""Deciding from the terminal: approve, reject, edit, respond, as a person (`decide_as_person`:
locally, `--as` must name one of the store's people; against a server, the token's user)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer

from .._util import parse_duration
from ..decisions import Approve, Decision, Edit, Reject, Respond
from ..grants import GrantAsk
from ..templates import REDACTED
from . import render
from .batch import (
    AgentFilter,
    AppFilter,
    DecideAll,
    ThreadFilter,
    ToolFilter,
    Yes,
    decide_all,
    refuse_filters_without_all,
)
from .options import AsUser, RequestId
from .parsing import apply_sets, parse_json, parse_json_object
from .state import CliInputError, acting_user, state_of, store_of

OptionalRequestId = Annotated[
    str | None, typer.Argument(metavar="[ID]", help="The request's id (not with --all).", show_default=False)
]
Comment = Annotated[str | None, typer.Option("--comment", "--reason", help="A note kept with the decision.")]


class GrantScopeChoice(StrEnum):
    agent = "agent"
    app = "app"
    thread = "thread"


def _decide(
    ctx: typer.Context,
    request_id: str,
    decision: Decision,
    as_user: str | None,
    grant: GrantAsk | None = None,
) -> None:
    actor = acting_user(ctx, as_user)
    request = store_of(ctx).decide_as_person(request_id, decision, actor=actor, channel="cli", grant=grant)
    render.decided(request)
    if request.granted_id is not None:
        render.console().print(f"Standing grant {request.granted_id} given.", markup=False)


def _refuse_masked(args: dict[str, Any]) -> None:
    """A server shows people redacted arguments masked: an edit must not send the mask back."""
    masked = sorted(key for key, value in args.items() if value == REDACTED)
    if masked:
        raise CliInputError(
            f"the server masks {', '.join(masked)}; give them with --set too, or all arguments with --args"
        )


def approve(
    ctx: typer.Context,
    request_id: OptionalRequestId = None,
    comment: Comment = None,
    as_user: AsUser = None,
    every: DecideAll = False,
    tool: ToolFilter = None,
    thread: ThreadFilter = None,
    agent: AgentFilter = None,
    app: AppFilter = None,
    yes: Yes = False,
    grant: Annotated[
        str | None,
        typer.Option(
            "--grant",
            metavar="DURATION",
            help="Also approve calls like this for DURATION (30m, 2h), where the rule's max_grant allows.",
        ),
    ] = None,
    grant_scope: Annotated[
        GrantScopeChoice,
        typer.Option("--grant-scope", help="Whose calls the grant covers: this agent's, app's or thread's."),
    ] = GrantScopeChoice.agent,
    grant_when: Annotated[
        str | None,
        typer.Option(
            "--grant-when",
            metavar="CEL",
            help="The calls the grant covers: a CEL condition over args (default: the same args; true: any).",
        ),
    ] = None,
) -> None:
    """Run the tool with its original arguments (with --all: every matching open request)."""
    if every:
        if grant is not None or grant_when is not None:
            raise CliInputError("--grant goes with one request, not --all")
        _refuse_id_with_all(request_id)
        chosen = {"tool": tool, "thread_id": thread, "agent": agent, "app": app}
        decide_all(ctx, "approve", comment, chosen, yes=yes, as_user=as_user)
        return
    refuse_filters_without_all(tool, thread, agent, app)
    standing = None
    if grant is not None:
        try:
            lifetime = parse_duration(grant)
        except (ValueError, TypeError) as exc:
            raise CliInputError(f"--grant {grant!r}: {exc}") from None
        standing = GrantAsk.parse(
            {"minutes": lifetime.total_seconds() / 60, "scope": grant_scope.value}
            | ({"when": grant_when} if grant_when is not None else {})
        )
    elif grant_when is not None:
        raise CliInputError("--grant-when goes with --grant DURATION")
    _decide(ctx, _one_id(request_id), Approve(comment=comment), as_user, standing)


def reject(
    ctx: typer.Context,
    request_id: OptionalRequestId = None,
    message: Annotated[
        str | None, typer.Option("--message", "--reason", help="Why; the model is told.")
    ] = None,
    as_user: AsUser = None,
    every: DecideAll = False,
    tool: ToolFilter = None,
    thread: ThreadFilter = None,
    agent: AgentFilter = None,
    app: AppFilter = None,
    yes: Yes = False,
) -> None:
    """Don't run the tool; the model is told it was rejected, and why (with --all: every
    matching open request, with one reason)."""
    if every:
        _refuse_id_with_all(request_id)
        chosen = {"tool": tool, "thread_id": thread, "agent": agent, "app": app}
        decide_all(ctx, "reject", message, chosen, yes=yes, as_user=as_user)
        return
    refuse_filters_without_all(tool, thread, agent, app)
    _decide(ctx, _one_id(request_id), Reject(message=message), as_user)


def _refuse_id_with_all(request_id: str | None) -> None:
    if request_id is not None:
        raise CliInputError("give either an ID or --all with filters, not both")


def _one_id(request_id: str | None) -> str:
    if request_id is None:
        raise CliInputError("give the request's ID (or --all with --tool, --thread, --agent or --app)")
    return request_id


def edit(
    ctx: typer.Context,
    request_id: RequestId,
    args: Annotated[str | None, typer.Option("--args", help="The full new arguments, a JSON object.")] = None,
    assignments: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="key=value, repeatable; starts from the current arguments. "
            "String arguments take the value as typed, others as JSON.",
        ),
    ] = None,
    comment: Annotated[str | None, typer.Option(help="Feedback for the model, after the change.")] = None,
    as_user: AsUser = None,
) -> None:
    """Run the tool with changed arguments (checked against the tool's JSON Schema)."""
    if (args is None) == (not assignments):
        raise CliInputError("give either --args JSON or one or more --set key=value")
    if args is not None:
        new_args = parse_json_object(args, option="--args")
    else:
        store = store_of(ctx)
        request = store.get_request(request_id)
        new_args = apply_sets(request.args, assignments or [], request.args_schema)
        if state_of(ctx).remote:
            _refuse_masked(new_args)
    _decide(ctx, request_id, Edit(args=new_args, comment=comment), as_user)


def respond(
    ctx: typer.Context,
    request_id: RequestId,
    message: Annotated[
        str | None, typer.Option(help="The answer the model gets in the tool's place.")
    ] = None,
    value: Annotated[str | None, typer.Option(help="A structured answer instead, as JSON.")] = None,
    as_user: AsUser = None,
) -> None:
    """Don't run the tool; answer in its place."""
    if message is None and value is None:
        raise CliInputError("give --message TEXT or --value JSON")
    parsed = parse_json(value, option="--value") if value is not None else None
    if message is None and parsed is None:
        raise CliInputError("--value null is no answer; give a message or a value")
    _decide(ctx, request_id, Respond(message=message, value=parsed), as_user)
