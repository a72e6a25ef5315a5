"""Deciding from the terminal: approve, reject, edit, respond, as a person (`decide_as_person`:
locally, `--as` must name one of the store's people; against a server, the token's user)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ..decisions import Approve, Decision, Edit, Reject, Respond
from ..templates import REDACTED
from . import render
from .options import AsUser, RequestId
from .parsing import apply_sets, parse_json, parse_json_object
from .state import CliInputError, acting_user, state_of, store_of

Comment = Annotated[str | None, typer.Option(help="A note kept with the decision.")]


def _decide(ctx: typer.Context, request_id: str, decision: Decision, as_user: str | None) -> None:
    actor = acting_user(ctx, as_user)
    request = store_of(ctx).decide_as_person(request_id, decision, actor=actor, channel="cli")
    render.decided(request)


def _refuse_masked(args: dict[str, Any]) -> None:
    """A server shows people redacted arguments masked: an edit must not send the mask back."""
    masked = sorted(key for key, value in args.items() if value == REDACTED)
    if masked:
        raise CliInputError(
            f"the server masks {', '.join(masked)}; give them with --set too, or all arguments with --args"
        )


def approve(
    ctx: typer.Context, request_id: RequestId, comment: Comment = None, as_user: AsUser = None
) -> None:
    """Run the tool with its original arguments."""
    _decide(ctx, request_id, Approve(comment=comment), as_user)


def reject(
    ctx: typer.Context,
    request_id: RequestId,
    message: Annotated[str | None, typer.Option(help="Why; the model is told.")] = None,
    as_user: AsUser = None,
) -> None:
    """Don't run the tool; the model is told it was rejected (and why)."""
    _decide(ctx, request_id, Reject(message=message), as_user)


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
