"""`signoff users ...`, `signoff agents ...` and `signoff tokens ...`: people, agents and their API
tokens, on the database (as `--as`) or through a server (`SIGNOFF_URL`, as the token's user);
the same `signoff.people_admin` operations as the API and the inbox's admin pages."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from .._util import format_duration
from ..token_lifetimes import DEFAULT_TTL, MAX_TTL, MAX_TTL_ENV, TTL_ENV
from ..visible import visible
from .options import JsonFlag
from .people_backing import JSON, people_face

users_app = typer.Typer(help="People and agents who may use the server.", no_args_is_help=True)
agents_app = typer.Typer(
    help="Agents (programs with API tokens): make one, list them, show one.", no_args_is_help=True
)
tokens_app = typer.Typer(help="API tokens (stored hashed; shown once).", no_args_is_help=True)

AsUser = Annotated[str | None, typer.Option("--as", help="Who is doing this (for the audit log).")]
Name = Annotated[str, typer.Argument(help="The user's name.")]
ExpiresIn = Annotated[
    str | None,
    typer.Option(
        "--expires-in",
        help=f"e.g. 30d (default: ${TTL_ENV}, else {format_duration(DEFAULT_TTL)}; at most "
        f"${MAX_TTL_ENV}, else {format_duration(MAX_TTL)}; through a server, the server's).",
    ),
]


def _print(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False))


# -- users -----------------------------------------------------------------------------------


@users_app.command("add")
def users_add(
    ctx: typer.Context,
    name: Name,
    role: Annotated[str, typer.Option(help="admin, member (a person) or agent (a program).")] = "member",
    display_name: Annotated[str | None, typer.Option("--display-name")] = None,
    email: Annotated[str | None, typer.Option("--email")] = None,
    as_user: AsUser = None,
) -> None:
    """Add a user."""
    user = people_face(ctx, as_user=as_user).add_person(
        name, role=role, display_name=display_name, email=email
    )
    typer.echo(visible(f"Added {user['role']} {user['name']}"))


@users_app.command("list")
def users_list(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """List users: role, groups, state, last sign-in and last seen."""
    people = people_face(ctx).people()
    if as_json:
        _print(people)
        return
    for user in people:
        typer.echo(visible(_person_line(user)))


def _person_line(user: JSON) -> str:
    groups = f"  groups: {', '.join(user['groups'])}" if user["groups"] else ""
    state = "  (disabled)" if user["disabled"] else ""
    sign_in = user.get("sign_in")
    signed = f"  signed in by {sign_in['method']} {sign_in['at'][:16]}" if sign_in else ""
    seen = f"  last seen {user['last_seen'][:16]}" if user.get("last_seen") else ""
    return f"{user['name']}  {user['role']}{groups}{state}{signed}{seen}"


@users_app.command("show")
def users_show(ctx: typer.Context, name: Name, as_json: JsonFlag = False) -> None:
    """One user: addresses, tokens, the requests they asked and the decisions they made."""
    person = people_face(ctx).person(name)
    if as_json:
        _print(person)
        return
    _show(person)


def _show(person: JSON) -> None:
    typer.echo(visible(_person_line(person)))
    for address in person["addresses"]:
        verified = "verified" if address["verified"] else "NOT verified"
        typer.echo(visible(f"  address {address['kind']}: {address['address']}  {verified}"))
    for token in person["tokens"]:
        typer.echo(visible(_token_line(token, "  token ")))
    for asked in person["requests"]:
        decided = f" by {asked['decided_by']}" if asked["decided_by"] else ""
        typer.echo(visible(f"  asked {asked['id']}  {asked['tool']}  {asked['status']}{decided}"))
    for decision in person["decisions"]:
        typer.echo(visible(f"  decided {decision['request_id']}  {decision['type']}  {decision['at'][:16]}"))


@users_app.command("disable")
def users_disable(ctx: typer.Context, name: Name, as_user: AsUser = None) -> None:
    """Disable a user: their tokens and sessions stop working."""
    people_face(ctx, as_user=as_user).change_person(name, disabled=True)
    typer.echo(f"Disabled {name}")


@users_app.command("enable")
def users_enable(ctx: typer.Context, name: Name, as_user: AsUser = None) -> None:
    """Enable a disabled user again."""
    people_face(ctx, as_user=as_user).change_person(name, disabled=False)
    typer.echo(f"Enabled {name}")


@users_app.command("set-role")
def users_set_role(
    ctx: typer.Context,
    name: Name,
    role: Annotated[str, typer.Argument(help="admin, member or agent.")],
    as_user: AsUser = None,
) -> None:
    """Change a user's role (the last enabled admin keeps theirs)."""
    changed = people_face(ctx, as_user=as_user).change_person(name, role=role)
    typer.echo(visible(f"{changed['name']} is now {changed['role']}"))


@users_app.command("edit")
def users_edit(
    ctx: typer.Context,
    name: Name,
    display_name: Annotated[str | None, typer.Option("--display-name")] = None,
    email: Annotated[str | None, typer.Option("--email")] = None,
    as_user: AsUser = None,
) -> None:
    """Change a user's display name or email."""
    people_face(ctx, as_user=as_user).change_person(name, display_name=display_name, email=email)
    typer.echo(f"Saved {name}")


# -- agents ----------------------------------------------------------------------------------


@agents_app.command("create")
def agents_create(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The agent's user name.")],
    display_name: Annotated[str | None, typer.Option("--display-name")] = None,
    label: Annotated[str | None, typer.Option("--label", help="What its first token is for.")] = None,
    expires_in: ExpiresIn = None,
    as_json: JsonFlag = False,
    as_user: AsUser = None,
) -> None:
    """Make an agent and its first API token, and print the token (only now; --json: the agent
    and the token's record too)."""
    made = people_face(ctx, as_user=as_user).create_agent(
        name, display_name=display_name, label=label, expires_in=expires_in
    )
    if as_json:
        _print(made)
        return
    typer.echo(made["token"]["token"])  # alone on its line: TOKEN=$(signoff agents create NAME)


@agents_app.command("list")
def agents_list(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Every agent and when it was last seen."""
    agents = people_face(ctx).agents()
    if as_json:
        _print(agents)
        return
    for agent in agents:
        typer.echo(visible(_person_line(agent)))


@agents_app.command("show")
def agents_show(
    ctx: typer.Context, name: Annotated[str, typer.Argument(help="The agent.")], as_json: JsonFlag = False
) -> None:
    """One agent: its tokens, what it asked and what was decided."""
    users_show(ctx, name, as_json)


# -- tokens ----------------------------------------------------------------------------------


@tokens_app.command("create")
def tokens_create(
    ctx: typer.Context,
    user: Annotated[str | None, typer.Option("--user", help="Whose token (default: yours).")] = None,
    label: Annotated[str | None, typer.Option("--label", help="What it is for.")] = None,
    expires_in: ExpiresIn = None,
    as_user: AsUser = None,
) -> None:
    """Create an API token and print it (only now: the store keeps its hash). It expires: at
    the default lifetime unless --expires-in asks for less, never past the maximum."""
    made = people_face(ctx, as_user=as_user).create_token(user=user, label=label, expires_in=expires_in)
    typer.echo(made["token"])


@tokens_app.command("list")
def tokens_list(
    ctx: typer.Context, user: Annotated[str | None, typer.Option("--user")] = None, as_json: JsonFlag = False
) -> None:
    """List tokens (never their secrets): state, expiry and last use."""
    tokens = [token for token in people_face(ctx).tokens() if user is None or token["user"] == user]
    if as_json:
        _print(tokens)
        return
    for token in tokens:
        typer.echo(visible(_token_line(token)))


def _token_line(token: JSON, prefix: str = "") -> str:
    state = token.get("state") or ("revoked" if token["revoked"] else "active")
    expires = f", expires {token['expires_at'][:16]}" if token["expires_at"] else ", never expires"
    used = f", last used {token['used_at'][:16]}" if token.get("used_at") else ", never used"
    owner = f", owned by {token['owner']}" if token.get("owner") else ""
    return f"{prefix}{token['id']}  {token['user']}  {token['label'] or '-'}  {state}{expires}{used}{owner}"


@tokens_app.command("revoke")
def tokens_revoke(ctx: typer.Context, token_id: str, as_user: AsUser = None) -> None:
    """Revoke a token by its id."""
    people_face(ctx, as_user=as_user).revoke_token(token_id)
    typer.echo(f"Revoked {token_id}")
