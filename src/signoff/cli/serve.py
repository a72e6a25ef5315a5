"""`signoff serve`: the API, the live inbox and the expiry sweeper in one process."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Annotated

import typer

from ..server import ServerSettings, create_app
from ..server.limits import parse_size
from ..server.serve import first_start, load_config, login_link
from .state import local_store_of, state_of

DEFAULT_PORT = 8765


def serve(
    ctx: typer.Context,
    db: Annotated[str | None, typer.Option("--db", help="The database (as for `signoff --db`).")] = None,
    host: Annotated[str, typer.Option(help="The address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="The port to listen on.")] = DEFAULT_PORT,
    config: Annotated[
        Path | None,
        typer.Option("--config", help="A rules YAML file; replaces the stored rules at start."),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="How people reach this server (for links).")
    ] = None,
    demo: Annotated[
        bool, typer.Option("--demo", help="Also run the scripted demo agent against this server.")
    ] = False,
    max_body: Annotated[
        str,
        typer.Option("--max-body", help="The largest request body accepted, e.g. 1MiB, 512KiB (413 beyond)."),
    ] = "1MiB",
) -> None:
    """Run the server: REST API (/docs), live web inbox, metrics, and the expiry sweeper."""
    import uvicorn

    try:
        body_limit = parse_size(max_body)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--max-body") from None
    state = state_of(ctx)
    if db is not None:
        state.db_url = db
    store = local_store_of(ctx, "serve")
    shown_host = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    settings = ServerSettings(base_url=base_url or f"http://{shown_host}:{port}", max_body=body_limit)
    if config is not None:
        load_config(store, config)
        typer.echo(f"Rules loaded from {config}")
    first = first_start(store, settings)
    typer.echo(f"signoff is serving on {settings.base_url}  (API docs: {settings.base_url}/docs)")
    if first is not None:
        admin, link = first
        typer.echo(f"First start: created the admin user {admin.name!r}. Sign in to the inbox (once) at:")
        typer.echo(f"    {link}")
    else:
        typer.echo(f"Inbox: {settings.base_url}/   (a new sign-in link: signoff login-link --user NAME)")
    if demo:
        from ..demo.remote import start_demo_agent

        threading.Thread(
            target=start_demo_agent, args=(store, settings), name="signoff-demo", daemon=True
        ).start()
    uvicorn.run(
        create_app(store, settings),
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=2,
    )


def login_link_command(
    ctx: typer.Context,
    user: Annotated[str, typer.Option("--user", help="Who signs in.")],
    base_url: Annotated[str, typer.Option("--base-url", help="The server's address.")] = (
        f"http://127.0.0.1:{DEFAULT_PORT}"
    ),
) -> None:
    """Print a one-time link that signs USER in to the web inbox."""
    typer.echo(login_link(local_store_of(ctx, "login-link"), ServerSettings(base_url=base_url), user))
