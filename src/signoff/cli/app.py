"""The root `signoff` command: global options, the sub-commands, and one-line errors."""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any, NoReturn

import typer
from typer.core import TyperGroup

from .. import __version__
from ..backends import TOKEN_ENV, URL_ENV
from ..errors import SignoffError
from ..store import DB_ENV
from . import (
    admin,
    channel_admin,
    channels,
    decide,
    demo,
    explain,
    layers,
    mcp_proxy,
    requests,
    serve,
    users,
    webhook_admin,
)
from .state import CliError, CliInputError, CliState


class SignoffGroup(TyperGroup):
    """Turns a user's mistake into `Error: ...` on stderr and a non-zero exit, never a traceback."""

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
            f"(with the API token in ${TOKEN_ENV}).",
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


COMMANDS = (
    requests.pending,
    requests.show,
    decide.approve,
    decide.reject,
    decide.edit,
    decide.respond,
    requests.cancel,
    requests.executions,
    requests.rerun,
    requests.sweep,
    explain.explain,
    demo.demo,
    serve.serve,
    channels.deliveries,
)
GROUPS = {
    "tool": layers.tool_app,
    "service": layers.service_app,
    "agent": layers.agent_app,
    "app": layers.app_app,
    "config": admin.config_app,
    "audit": admin.audit_app,
    "groups": admin.groups_app,
    "users": users.users_app,
    "tokens": users.tokens_app,
    "agents": users.agents_app,
    "webhooks": webhook_admin.webhooks_app,
    "outbox": channels.outbox_app,
    "channels": channel_admin.channels_app,
}
for command in COMMANDS:
    app.command()(command)
for name, group in GROUPS.items():
    app.add_typer(group, name=name)
app.command("login-link")(serve.login_link_command)
app.command("mcp-proxy")(mcp_proxy.mcp_proxy)
