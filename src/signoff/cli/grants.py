"""`signoff grants`: the standing grants in force (`--all`: expired and revoked ones too), and
`signoff grants revoke ID`. A grant is given with `signoff approve ID --grant 30m`."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from .._util import format_moment, utcnow
from ..client import Client
from ..errors import PermissionDenied
from ..grants import Grant
from . import render
from .options import AsUser, JsonFlag
from .state import acting_user, store_of

grants_app = typer.Typer(
    help="Standing grants: approvals of calls like one decided, for a while.", invoke_without_command=True
)


@grants_app.callback()
def grants(
    ctx: typer.Context,
    all: Annotated[bool, typer.Option("--all", help="Expired and revoked grants too.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """List the standing grants in force, newest first."""
    if ctx.invoked_subcommand is not None:
        return
    store = store_of(ctx)
    found = store.list_grants(include_ended=all)
    now = utcnow()
    if as_json:
        render.print_json([grant.to_dict(now) for grant in found])
        return
    out = render.console()
    if not found:
        out.print("No standing grants." if not all else "No grants.")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("id", "status", "tool", "covers", "when", "by", "until"):
        table.add_column(column, no_wrap=column in ("id", "until"))
    for grant in found:
        table.add_row(
            grant.id,
            grant.status(now),
            grant.tool_name,
            _covers(grant),
            grant.covers_args,
            grant.granted_by,
            format_moment(grant.revoked_at or grant.expires_at),
        )
    out.print(table, markup=False)


def _covers(grant: Grant) -> str:
    if grant.scope == "app":
        return f"app {grant.app}"
    if grant.scope == "thread":
        return f"thread {grant.thread_id} of {grant.creator}"
    return f"agent {grant.agent or '-'} ({grant.creator})"


@grants_app.command("revoke")
def revoke(
    ctx: typer.Context,
    grant_id: Annotated[str, typer.Argument(help="The grant's id (grt_...).")],
    as_user: AsUser = None,
) -> None:
    """End a standing grant now: calls it covered are asked about again. Its author or an admin."""
    store = store_of(ctx)
    actor = acting_user(ctx, as_user)
    if isinstance(store, Client):
        grant = store.revoke_grant(grant_id)
    else:
        user = store.get_user(actor)
        if store.count_users() > 0 and (user is None or user.disabled or user.is_agent):
            raise PermissionDenied(f"{actor} is not one of this signoff's people")
        admin = store.count_users() == 0 or (user is not None and user.is_admin)
        grant = store.revoke_grant(grant_id, actor=actor, channel="cli", admin=admin)
    render.console().print(f"Grant {grant.id}: {grant.status(utcnow())}.", markup=False)
