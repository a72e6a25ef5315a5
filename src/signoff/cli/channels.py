"""`signoff users set-address`, `signoff deliveries ID` and `signoff outbox …`: where people are
told, and what happened to each notification (`signoff channels …` and `signoff webhooks …`:
`channel_admin`, `webhook_admin`)."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from ..store.address_ops import check_address
from ..visible import visible
from .channel_backing import channels_face
from .state import CliInputError, acting_user, local_store_of
from .users import AsUser, users_app

outbox_app = typer.Typer(help="What the outbox gave up sending, and sending it again.", no_args_is_help=True)


@users_app.command("set-address")
def set_address(
    ctx: typer.Context,
    user: Annotated[str, typer.Argument(help="Whose addresses.")],
    slack: Annotated[str | None, typer.Option("--slack", help="Slack user id (U123…).")] = None,
    wecom: Annotated[str | None, typer.Option("--wecom", help="WeCom user id.")] = None,
    feishu: Annotated[str | None, typer.Option("--feishu", help="Feishu open id (ou_…).")] = None,
    email: Annotated[str | None, typer.Option("--email", help="Email address.")] = None,
    text: Annotated[
        list[str] | None, typer.Option("--text", help="A text chat's id: PLATFORM:ID (repeatable).")
    ] = None,
    other: Annotated[
        list[str] | None,
        typer.Option("--address", help="An address on an installed channel plugin: KIND:ID (repeatable)."),
    ] = None,
    remove: Annotated[
        list[str] | None, typer.Option("--remove", help="Remove the address of this kind (repeatable).")
    ] = None,
    as_user: AsUser = None,
) -> None:
    """Set (or --remove) a person's addresses on the channels: verified at once (the CLI works on
    the database itself, as an admin; a person's own address set in the inbox waits for a code)."""
    store = local_store_of(ctx, "users set-address")
    actor = acting_user(ctx, as_user)
    given = [
        (kind, value)
        for kind, value in (("slack", slack), ("wecom", wecom), ("feishu", feishu), ("email", email))
        if value
    ]
    for entry in text or []:
        platform, sep, address = entry.partition(":")
        if not sep or not platform or not address:
            raise CliInputError(f"--text takes PLATFORM:ID (e.g. wechat:wxid_123), not {entry!r}")
        given.append((f"text:{platform}", address))
    for entry in other or []:
        kind, sep, address = entry.partition(":")
        if not sep or not kind or not address:
            raise CliInputError(f"--address takes KIND:ID (e.g. acme:U123), not {entry!r}")
        given.append((kind, address))
    if not given and not remove:
        raise CliInputError(
            "give at least one address (--slack, --wecom, --feishu, --email, --text, --address) or --remove"
        )
    for kind, value in given:  # all checked before any is set
        check_address(kind, value)
    for kind, value in given:
        store.set_address(user, kind, value, actor=actor)
        typer.echo(visible(f"{user}: {kind} = {value} (verified)"))
    for kind in remove or []:
        removed = store.remove_address(user, kind, actor=actor)
        typer.echo(visible(f"{user}: {kind} {'removed' if removed else 'was not set'}"))


@users_app.command("addresses")
def addresses(
    ctx: typer.Context, user: str, as_json: Annotated[bool, typer.Option("--json")] = False
) -> None:
    """A person's addresses on the channels, and whether each is verified (only a verified one
    is sent to, and decides)."""
    found = local_store_of(ctx, "users addresses").address_states(user)
    if as_json:
        typer.echo(json.dumps({state.kind: state.to_dict() for state in found}, indent=2))
        return
    for state in found:
        shown = f"verified ({state.verified_by})" if state.verified else "NOT verified (sent nothing)"
        typer.echo(visible(f"{state.kind}  {state.address}  {shown}"))


# -- the delivery log and dead letters ----------------------------------------------------------


def deliveries(
    ctx: typer.Context,
    request_id: Annotated[str, typer.Argument(help="The request.")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Where a request was sent, every attempt, and what the outbox still holds for it."""
    store = local_store_of(ctx, "deliveries")
    store.get_request(request_id)
    attempts = store.delivery_attempts(request_id)
    rows = store.outbox_for(request_id)
    if as_json:
        typer.echo(
            json.dumps(
                {"attempts": [a.to_dict() for a in attempts], "outbox": [row.to_dict() for row in rows]},
                indent=2,
            )
        )
        return
    if not rows and not attempts:
        typer.echo(
            "Nothing was sent for this request: its rule names no channel but the inbox, "
            "and no webhook wants its events."
        )
        return
    for row in rows:
        where = row.target or row.recipient or "-"
        line = f"#{row.id}  {row.event}  {row.message}  {row.channel} → {where}  {row.state}"
        line += f"  attempts: {row.attempts}"
        if row.state == "pending" and row.attempts:
            line += f"  next: {row.next_at.isoformat(timespec='seconds')}"
        if row.last_error:
            line += f"  ({row.last_error})"
        typer.echo(visible(line))
        for attempt in attempts:
            if attempt.outbox_id == row.id:
                said = f": {attempt.error}" if attempt.error else ""
                stamp = attempt.attempted_at.isoformat(timespec="seconds")
                typer.echo(visible(f"    {attempt.attempt}. {stamp}  {attempt.outcome}{said}"))


@outbox_app.command("dead")
def outbox_dead(ctx: typer.Context, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """What the outbox gave up sending, newest first."""
    rows = channels_face(ctx).outbox_dead()
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        where = row["target"] or row["recipient"] or "-"
        about = row["request_id"] or f"code for {row['recipient']}"
        line = f"#{row['id']}  {about}  {row['event']}  {row['channel']} → {where}  ({row['last_error']})"
        typer.echo(visible(line))


@outbox_app.command("retry")
def outbox_retry(ctx: typer.Context, outbox_id: int, as_user: AsUser = None) -> None:
    """Send a dead letter again (after fixing what made it fail; not while its channel or
    webhook is disabled)."""
    row = channels_face(ctx, as_user=as_user).retry_delivery(outbox_id)
    typer.echo(f"#{row['id']} is pending again: the server's delivery worker sends it")
