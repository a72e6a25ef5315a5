"""`signoff serve`: the API, the live inbox and the expiry sweeper in one process."""

from __future__ import annotations

import logging
import shlex
import threading
from datetime import timedelta
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from .._util import format_duration, parse_duration
from ..channels.registry import ENV_FILE, ChannelRegistry
from ..demo.runner import new_thread_id
from ..destinations import Destinations
from ..destinations.masking import shown_url
from ..errors import ConfigError
from ..outbox import OutboxSettings, RetryPolicy
from ..server import ServerSettings, create_app
from ..server.disk_health import MinFreeDisk
from ..server.limits import parse_size
from ..server.serve import announce, announced_url, first_start, load_config, login_link
from ..server.sign_in_limit import SignInLimit
from ..store import SQLiteStore, Store, open_store
from ..token_lifetimes import DEFAULT_TTL, MAX_TTL, MAX_TTL_ENV, TTL_ENV, TokenLifetimes
from .listening import listen
from .oidc_options import (
    OidcAdmin,
    OidcAdminGroup,
    OidcClientId,
    OidcCreatePeople,
    OidcGroupMap,
    OidcGroupsClaim,
    OidcIssuer,
    OidcNameClaim,
    OidcOnly,
    OidcScopes,
    OidcSecretFile,
    oidc_settings,
)
from .options import AllowPrivate, SecretsKeyFile, secrets_key
from .purge_options import PurgeExportDir, PurgeOlderThan, daily_purge
from .state import CliError, local_store_of, state_of
from .workers import run_workers, sqlite_refusal

DEFAULT_PORT = 8765
STARTUP_FAILED = 3
"""uvicorn's exit code when the server cannot start."""


class AgentRulesChoice(StrEnum):
    allow = "allow"
    deny = "deny"


def serve(
    ctx: typer.Context,
    db: Annotated[str | None, typer.Option("--db", help="The database (as for `signoff --db`).")] = None,
    host: Annotated[str, typer.Option(help="The address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="The port to listen on.")] = DEFAULT_PORT,
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
    demo_thread: Annotated[
        str | None,
        typer.Option(
            "--demo-thread",
            help="The demo agent's thread (default: a new one). The thread of a finished demo "
            "replays it: decided calls are not asked again, tools that ran do not run again.",
        ),
    ] = None,
    agent_rules: Annotated[
        AgentRulesChoice,
        typer.Option(
            "--agent-rules",
            help=(
                "For a tool this server's rules do not cover: 'allow' lets the agent's own rule say who "
                "decides, the quorum, deadline, on_expire and unattended handling; 'deny' applies this "
                "server's defaults."
            ),
        ),
    ] = AgentRulesChoice.allow,
    forwarded_allow_ips: Annotated[
        str | None,
        typer.Option(
            "--forwarded-allow-ips",
            help="Proxies (comma-separated IPs or networks, or '*') whose X-Forwarded-Proto and "
            "X-Forwarded-For are trusted, e.g. 127.0.0.1 for a TLS proxy on this host. "
            "Default: none is trusted.",
        ),
    ] = None,
    max_body: Annotated[
        str,
        typer.Option("--max-body", help="The largest request body accepted, e.g. 1MiB, 512KiB (413 beyond)."),
    ] = "1MiB",
    channels: Annotated[
        Path | None,
        typer.Option(
            "--channels",
            envvar=ENV_FILE,
            help="The channels file (Slack, WeCom, Feishu, email, text): see the README's Channels.",
        ),
    ] = None,
    outbox: Annotated[
        bool,
        typer.Option(
            "--outbox/--no-outbox", help="Run the delivery worker here (any number of replicas may)."
        ),
    ] = True,
    retry_first: Annotated[
        float,
        typer.Option(
            "--outbox-retry-first", min=0.001, help="Seconds before a failed delivery's first retry."
        ),
    ] = RetryPolicy.first,
    retry_cap: Annotated[
        float,
        typer.Option("--outbox-retry-cap", min=0.001, help="The longest wait between retries, in seconds."),
    ] = RetryPolicy.cap,
    allow_private_webhooks: AllowPrivate = False,
    secrets_key_file: SecretsKeyFile = None,
    min_free_disk: Annotated[
        str,
        typer.Option(
            "--min-free-disk",
            help="Free space the database's disk must have for /healthz to answer 200: a size "
            "(100MiB, 2G) or a share of the disk (1%); 0 turns the check off. SQLite only: a "
            "PostgreSQL server's disk cannot be read from here.",
        ),
    ] = "100MiB",
    token_ttl: Annotated[
        str,
        typer.Option(
            "--token-ttl",
            envvar=TTL_ENV,
            help="How long an API token made without a lifetime lives (made through the API), e.g. 30d.",
        ),
    ] = format_duration(DEFAULT_TTL),
    token_max_ttl: Annotated[
        str,
        typer.Option(
            "--token-max-ttl",
            envvar=MAX_TTL_ENV,
            help="The longest lifetime an API token may be made with, e.g. 365d.",
        ),
    ] = format_duration(MAX_TTL),
    sign_in_failures: Annotated[
        int,
        typer.Option(
            "--sign-in-failures",
            min=1,
            help="Failed sign-ins (tokens, sessions, login and handle links) one address may make "
            "within --sign-in-window; past them its sign-ins get 429 until the window has room.",
        ),
    ] = SignInLimit.failures,
    sign_in_window: Annotated[
        str, typer.Option("--sign-in-window", help="The window failed sign-ins are counted in, e.g. 60s, 5m.")
    ] = format_duration(timedelta(seconds=SignInLimit.window)),
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            min=1,
            max=64,
            help="Processes serving this port (PostgreSQL only; each is a replica of the others).",
        ),
    ] = 1,
    outbox_lease: Annotated[
        float,
        typer.Option(
            "--outbox-lease",
            min=1.0,
            help="Seconds a claimed delivery is this server's; one that dies holding it is retried after.",
        ),
    ] = OutboxSettings.lease.total_seconds(),
    session_max_age: Annotated[
        str,
        typer.Option("--session-max-age", help="The longest a web session lives, e.g. 12h, 7d."),
    ] = format_duration(ServerSettings.session_ttl),
    oidc_issuer: OidcIssuer = None,
    oidc_client_id: OidcClientId = None,
    oidc_client_secret_file: OidcSecretFile = None,
    oidc_scopes: OidcScopes = "openid profile email",
    oidc_name_claim: OidcNameClaim = "preferred_username",
    oidc_groups_claim: OidcGroupsClaim = "groups",
    oidc_group_map: OidcGroupMap = None,
    oidc_create_people: OidcCreatePeople = False,
    oidc_admin_group: OidcAdminGroup = None,
    oidc_admin: OidcAdmin = None,
    oidc_only: OidcOnly = False,
    purge_older_than: PurgeOlderThan = None,
    purge_export_dir: PurgeExportDir = None,
) -> None:
    """Run the server: REST API (/docs), live web inbox, metrics, and the expiry sweeper."""
    import uvicorn

    try:
        body_limit = parse_size(max_body)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--max-body") from None
    try:
        disk_threshold = MinFreeDisk.parse(min_free_disk)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--min-free-disk") from None
    try:
        window = parse_duration(sign_in_window).total_seconds()
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--sign-in-window") from None
    try:
        session_ttl = parse_duration(session_max_age)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--session-max-age") from None
    oidc = oidc_settings(
        issuer=oidc_issuer,
        client_id=oidc_client_id,
        secret_file=oidc_client_secret_file,
        scopes=oidc_scopes,
        name_claim=oidc_name_claim,
        groups_claim=oidc_groups_claim,
        group_map=oidc_group_map,
        create_people=oidc_create_people,
        admin_groups=oidc_admin_group,
        admins=oidc_admin,
        only=oidc_only,
    )
    try:
        tokens = TokenLifetimes.parse(token_ttl, token_max_ttl)
    except ConfigError as exc:
        raise typer.BadParameter(exc.message, param_hint="--token-ttl / --token-max-ttl") from None
    purge = daily_purge(purge_older_than, purge_export_dir)
    state = state_of(ctx)
    if db is not None:
        state.db_url = db
    if workers > 1 and demo:
        raise CliError("--demo runs in one process: leave out --workers")
    listening = listen(host, port)
    store = local_store_of(ctx, "serve")
    if workers > 1 and isinstance(store, SQLiteStore):
        raise CliError(sqlite_refusal(workers))
    shown_host = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    destinations = Destinations(allow_private=allow_private_webhooks)
    registry = (
        ChannelRegistry.load(channels, destinations=destinations)
        if channels is not None
        else ChannelRegistry()
    )
    key = secrets_key(secrets_key_file)
    retry = RetryPolicy(first=retry_first, cap=max(retry_cap, retry_first))
    settings = ServerSettings(
        base_url=base_url or f"http://{shown_host}:{port}",
        agent_rules=agent_rules.value,
        max_body=body_limit,
        outbox=OutboxSettings(enabled=outbox, retry=retry, lease=timedelta(seconds=outbox_lease)),
        destinations=destinations,
        min_free_disk=disk_threshold,
        tokens=tokens,
        sign_in_limit=SignInLimit(failures=sign_in_failures, window=window),
        secrets_key=key,
        session_ttl=session_ttl,
        oidc=oidc,
        purge=purge,
    )
    show_channel_logs()
    if config is not None:
        load_config(store, config)
        typer.echo(f"Rules loaded from {config}")
    if len(registry):
        typer.echo(f"Channels: {', '.join(registry.names())}")
    if key is not None:
        typer.echo(f"Secrets of channels kept in the database: sealed with key {key.id}")
    if purge is not None:
        days, folder = purge.older_than.days, purge.export_dir
        typer.echo(f"Daily purge: what closed over {days} days ago (the audit entries it drops to {folder})")
    first = first_start(store, settings)
    announce(store, settings)
    many = f", {workers} workers" if workers > 1 else ""
    typer.echo(f"signoff is serving on {settings.base_url}  (API docs: {settings.base_url}/docs{many})")
    if oidc is not None:
        typer.echo(
            f"Sign-in through {oidc.issuer} (client {oidc.client_id}); its redirect URI: "
            f"{oidc.redirect_uri(settings.base_url)}"
        )
    if first is not None:
        admin, link = first
        typer.echo(f"First start: created the admin user {admin.name!r}. Sign in to the inbox (once) at:")
        typer.echo(f"    {link}")
    else:
        typer.echo(f"Inbox: {settings.base_url}/   (a new sign-in link: signoff login-link --user NAME)")
    if demo:
        from ..demo.remote import install_demo_rules, start_demo_agent

        added = install_demo_rules(store)
        if added:
            typer.echo(
                f"Demo rules added to the server's rules: {', '.join(added)} (see {settings.base_url}/rules)"
            )
        local = f"http://{shown_host}:{port}"
        thread = demo_thread or new_thread_id()
        replay = f"{_cli(state.db_url)} serve --demo --demo-thread {thread}"
        threading.Thread(
            target=start_demo_agent,
            args=(store, local, settings.base_url.rstrip("/") + "/"),
            kwargs={"thread_id": thread, "replay": replay},
            name="signoff-demo",
            daemon=True,
        ).start()

    def serve_on(serving: Store) -> int:
        server_config = uvicorn.Config(
            create_app(serving, settings, channels=registry),
            host=host,
            port=port,
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=2,
            # behind a trusted proxy the request's scheme (and so Secure cookies) follows X-Forwarded-Proto
            proxy_headers=forwarded_allow_ips is not None,
            forwarded_allow_ips=forwarded_allow_ips,
        )
        server = uvicorn.Server(server_config)
        server.run(sockets=[listening])
        return 0 if server.started else STARTUP_FAILED

    if workers == 1:
        code = serve_on(store)
    else:
        store.close()  # each worker opens its own: connections do not cross a fork

        def worker() -> int:
            own = open_store(state.db_url)
            try:
                return serve_on(own)
            finally:
                own.close()

        code = run_workers(workers, worker)
    if code:
        raise typer.Exit(code)


def _cli(db_url: str | None) -> str:
    """`signoff`, with the database given as the user gave it (a password in it hidden)."""
    return f"signoff --db {shlex.quote(shown_url(db_url))}" if db_url else "signoff"


def show_channel_logs() -> None:
    """The delivery worker's and the callbacks' log lines (one per dispatch and per inbound
    action) on stderr, where `signoff serve` prints."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    for name in ("signoff.outbox", "signoff.channels"):
        logger = logging.getLogger(name)
        if not logger.handlers:
            logger.addHandler(handler)
            logger.setLevel(logging.INFO)


def login_link_command(
    ctx: typer.Context,
    user: Annotated[str, typer.Option("--user", help="Who signs in.")],
    url: Annotated[
        str | None,
        typer.Option(
            "--url",
            "--base-url",
            help="The server's address (default: the one the latest `signoff serve` on this "
            "database announced).",
        ),
    ] = None,
) -> None:
    """Print a one-time link that signs USER in to the web inbox."""
    store = local_store_of(ctx, "login-link")
    base_url = url or announced_url(store)
    if base_url is None:
        raise CliError(
            "no signoff serve has run on this database yet, so its address is unknown: "
            f"give it with --url (e.g. --url http://127.0.0.1:{DEFAULT_PORT})"
        )
    typer.echo(login_link(store, ServerSettings(base_url=base_url), user))
