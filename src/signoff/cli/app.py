"""The root `signoff` command: global options, the sub-commands, and one-line errors."""

from __future__ import annotations

import os
import sys
from functools import cache
from importlib import import_module
from typing import Annotated, Any, NoReturn

import typer
from typer.core import TyperGroup
from typer.main import get_command_from_info, get_group_from_info
from typer.models import CommandInfo, TyperInfo

from .. import __version__
from ..environment import DB_ENV, TOKEN_ENV, URL_ENV
from ..errors import SignoffError
from .coercion import coerce_plainly
from .state import CliError, CliInputError, CliState


class SignoffGroup(TyperGroup):
    """Turns a user's mistake into `Error: ...` on stderr and a non-zero exit, never a traceback;
    finds its commands in `COMMANDS`, loading each when it is used."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [*super().list_commands(ctx), *COMMANDS]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        return super().get_command(ctx, cmd_name) or lazy_command(cmd_name)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        coerce_plainly(self, ctx)
        return super().parse_args(ctx, args)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None:
            coerce_plainly(command, ctx)
        return name, command, rest

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (SignoffError, CliError) as exc:
            _fail(str(exc), getattr(exc, "exit_code", 1))
        except BrokenPipeError:
            _reader_left()
        except OSError as exc:
            _fail(f"{exc.strerror or exc}{f': {exc.filename}' if exc.filename else ''}", 1)


def _fail(message: str, code: int) -> NoReturn:
    typer.echo(f"Error: {message}", err=True)
    raise typer.Exit(code)


SIGPIPE_EXIT = 128 + 13
"""What a shell reports for a program that SIGPIPE ended (`yes | head`)."""


def _reader_left() -> NoReturn:
    """The reader of standard output went away (`signoff audit export | head`): stop quietly with
    SIGPIPE's exit code, and point standard output at /dev/null so that the flush at exit does not
    complain either."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real file descriptor (e.g. under a test runner)
        pass
    raise typer.Exit(SIGPIPE_EXIT)


app = typer.Typer(
    name="signoff",
    cls=SignoffGroup,
    help="The human approval layer for AI agents' tool calls.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,
)
"""Help and usage errors in Click's plain format: it wraps the help text and never cuts an
option's name to fit (Typer's Rich panels do, at 80 columns)."""


def _version(value: bool) -> None:
    if value:
        typer.echo(f"signoff {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            envvar=DB_ENV,
            help="The database: sqlite:///relative.db, sqlite:////abs/path.db, a file path, or "
            "postgresql://… (default: a SQLite file in your user data directory).",
            show_default=False,
        ),
    ] = None,
    url: Annotated[
        str | None,
        typer.Option(
            "--url",
            envvar=URL_ENV,
            help="Work through the signoff server at this address instead of a database "
            f"(with the API token in ${TOKEN_ENV}); replicas' addresses separated by commas.",
            show_default=False,
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar=TOKEN_ENV,
            help=f"The API token for --url (better set ${TOKEN_ENV}: a command line is seen by others).",
            show_default=False,
        ),
    ] = None,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    db_source = ctx.get_parameter_source("db")
    if url and db and db_source is not None and db_source.name == "COMMANDLINE":
        raise CliInputError(f"give either --db or a server (--url / ${URL_ENV}), not both")
    state = CliState(db_url=db, server_url=url or None, token=token or None)
    ctx.obj = state
    ctx.call_on_close(state.close)


COMMANDS: dict[str, tuple[str, ...]] = {
    "pending": ("requests", "pending"),
    "show": ("requests", "show"),
    "approve": ("decide", "approve"),
    "reject": ("decide", "reject"),
    "edit": ("decide", "edit"),
    "respond": ("decide", "respond"),
    "cancel": ("requests", "cancel"),
    "executions": ("requests", "executions"),
    "rerun": ("requests", "rerun"),
    "sweep": ("requests", "sweep"),
    "purge": ("purge", "purge"),
    "explain": ("explain", "explain"),
    "demo": ("demo", "demo"),
    "serve": ("serve", "serve"),
    "deliveries": ("channels", "deliveries"),
    "tool": ("layers", "tool_app"),
    "service": ("layers", "service_app"),
    "agent": ("layers", "agent_app"),
    "app": ("layers", "app_app"),
    "config": ("admin", "config_app"),
    "rules": ("shadow_rules", "rules_app"),
    "audit": ("admin", "audit_app"),
    "groups": ("admin", "groups_app"),
    "users": ("users", "users_app", "channels"),
    "tokens": ("users", "tokens_app"),
    "agents": ("users", "agents_app"),
    "webhooks": ("webhook_admin", "webhooks_app"),
    "outbox": ("channels", "outbox_app"),
    "channels": ("channel_admin", "channels_app"),
    "login-link": ("serve", "login_link_command"),
    "mcp-proxy": ("mcp_proxy", "mcp_proxy"),
    "grants": ("grants", "grants_app"),
    "plugins": ("plugins", "plugins"),
}
"""Each command (or group of commands), and where it lives: `signoff.cli.<module>.<attribute>`, a
command function or a Typer app, then the modules that add commands to that app. A command's
modules are imported only when it runs (or help lists it), so `signoff pending` does not load the
server, the MCP SDK or the channels."""


@cache
def lazy_command(name: str) -> Any:
    """The Click command `name` runs, built from its module on first use."""
    found = COMMANDS.get(name)
    if found is None:
        return None
    module, attribute, *extending = found
    target = getattr(import_module(f"{__package__}.{module}"), attribute)
    for other in extending:
        import_module(f"{__package__}.{other}")
    markup, short = app.rich_markup_mode, app.pretty_exceptions_short
    if isinstance(target, typer.Typer):  # as app.add_typer(target, name=name) would
        info = TyperInfo(target, name=name)
        suggest = app.suggest_commands
        return get_group_from_info(
            info, pretty_exceptions_short=short, rich_markup_mode=markup, suggest_commands=suggest
        )
    # as app.command(name)(target) would
    return get_command_from_info(
        CommandInfo(name=name, callback=target), pretty_exceptions_short=short, rich_markup_mode=markup
    )
