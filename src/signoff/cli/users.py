"""`signoff users ...` and `signoff tokens ...`: people, agents and their API tokens."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from .._util import format_duration, format_moment, utcnow
from ..errors import ConfigError, InvalidInput
from ..identity import Role
from ..token_lifetimes import DEFAULT_TTL, MAX_TTL, MAX_TTL_ENV, TTL_ENV, TokenLifetimes
from ..visible import visible
from .state import CliError, CliInputError, acting_user, local_store_of

users_app = typer.Typer(help="People and agents who may use the server.", no_args_is_help=True)
tokens_app = typer.Typer(help="API tokens (stored hashed; shown once).", no_args_is_help=True)

AsUser = Annotated[str | None, typer.Option("--as", help="Who is doing this (for the audit log).")]


@users_app.command("add")
def users_add(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The user name (what approvers name).")],
    role: Annotated[str, typer.Option(help="admin, member (a person) or agent (a program).")] = "member",
    display_name: Annotated[str | None, typer.Option("--display-name")] = None,
    email: Annotated[str | None, typer.Option("--email")] = None,
    as_user: AsUser = None,
) -> None:
    """Add a user."""
    if role not in ("admin", "member", "agent"):
        raise CliInputError(f"unknown role {role!r}; use admin, member or agent")
    role_value: Role = role  # type: ignore[assignment]
    user = local_store_of(ctx, "users add").add_user(
        name, role=role_value, display_name=display_name, email=email, actor=acting_user(ctx, as_user)
    )
    typer.echo(f"Added {user.role} {user.name}")


@users_app.command("list")
def users_list(ctx: typer.Context, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """List users."""
    users = local_store_of(ctx, "users list").list_users()
    if as_json:
        typer.echo(json.dumps([user.to_dict() for user in users], indent=2))
        return
    for user in users:
        groups = f"  groups: {', '.join(user.groups)}" if user.groups else ""
        state = "  (disabled)" if user.disabled else ""
        typer.echo(visible(f"{user.name}  {user.role}{groups}{state}"))


@users_app.command("disable")
def users_disable(ctx: typer.Context, name: str, as_user: AsUser = None) -> None:
    """Disable a user: their tokens and sessions stop working."""
    local_store_of(ctx, "users disable").update_user(name, disabled=True, actor=acting_user(ctx, as_user))
    typer.echo(f"Disabled {name}")


@tokens_app.command("create")
def tokens_create(
    ctx: typer.Context,
    user: Annotated[str, typer.Option("--user", help="Whose token.")],
    label: Annotated[str | None, typer.Option("--label", help="What it is for.")] = None,
    expires_in: Annotated[
        str | None,
        typer.Option(
            "--expires-in",
            help=f"e.g. 30d (default: ${TTL_ENV}, else {format_duration(DEFAULT_TTL)}; at most "
            f"${MAX_TTL_ENV}, else {format_duration(MAX_TTL)}).",
        ),
    ] = None,
    as_user: AsUser = None,
) -> None:
    """Create an API token and print it (only now: the store keeps its hash). It expires: at
    the default lifetime unless --expires-in asks for less, never past the maximum."""
    try:
        ttl = TokenLifetimes.from_env().lifetime(expires_in)
    except (ConfigError, InvalidInput) as exc:
        raise CliInputError(exc.message) from None
    secret, _ = local_store_of(ctx, "tokens create").issue_credential(
        "token", user, ttl=ttl, label=label, actor=acting_user(ctx, as_user)
    )
    typer.echo(secret)


@tokens_app.command("list")
def tokens_list(ctx: typer.Context, user: Annotated[str | None, typer.Option("--user")] = None) -> None:
    """List tokens (never their secrets)."""
    now = utcnow()
    for credential in local_store_of(ctx, "tokens list").list_credentials("token", user):
        expires = credential.expires_at
        if credential.revoked_at:
            state = "revoked"
        elif expires is not None and expires <= now:
            state = f"expired {format_moment(expires)}"
        else:
            state = (
                f"active, expires {format_moment(expires)}"
                if expires is not None
                else "active, never expires"
            )
        typer.echo(visible(f"{credential.id}  {credential.user_name}  {credential.label or '-'}  {state}"))


@tokens_app.command("revoke")
def tokens_revoke(ctx: typer.Context, token_id: str, as_user: AsUser = None) -> None:
    """Revoke a token by its id."""
    if not local_store_of(ctx, "tokens revoke").revoke_credential(
        id=token_id, actor=acting_user(ctx, as_user)
    ):
        raise CliError(f"no active token {token_id!r}")
    typer.echo(f"Revoked {token_id}")
