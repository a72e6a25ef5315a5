"""`signoff mcp-proxy`: gate an MCP server's tool calls (needs `pip install 'signoff[mcp]'`)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from ..backends import TOKEN_ENV, Backing, open_backend
from ..client import Client
from ..rules import RuleSet
from .state import CliError, CliInputError, state_of

ELICIT_TOKEN_ENV = "SIGNOFF_ELICIT_TOKEN"


def mcp_proxy(
    ctx: typer.Context,
    command: Annotated[
        list[str] | None,
        typer.Argument(metavar="-- COMMAND [ARGS]...", help="The upstream MCP server to start (stdio)."),
    ] = None,
    name: Annotated[
        str, typer.Option("--name", help="The service: its tools are NAME.<tool> for the rules.")
    ] = "",
    config: Annotated[
        Path | None, typer.Option("--config", help="A rules YAML file (default: the stored rules).")
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            help="The agent whose rules apply (through a server: the token's user). The MCP client's "
            "own name is only recorded.",
            show_default=False,
        ),
    ] = None,
    thread: Annotated[
        str | None,
        typer.Option(
            "--thread",
            metavar="KEY",
            help="Keep the proxy's calls in thread mcp:NAME:KEY, so that a restarted proxy with the same "
            "key finds them (a client's retry continues its call instead of asking again).",
            show_default=False,
        ),
    ] = None,
    url: Annotated[
        str | None,
        typer.Option(
            "--url", help=f"Ask through this signoff server (token in ${TOKEN_ENV}).", show_default=False
        ),
    ] = None,
    upstream_url: Annotated[
        str | None,
        typer.Option("--upstream-url", help="Wrap this streamable-HTTP MCP server instead of a command."),
    ] = None,
    listen: Annotated[
        str | None,
        typer.Option("--listen", metavar="HOST:PORT", help="Serve streamable HTTP at /mcp instead of stdio."),
    ] = None,
    max_wait: Annotated[
        float | None,
        typer.Option(
            "--max-wait",
            min=0.0,
            help="After this many seconds answer 'awaits approval; call again with the same arguments'.",
        ),
    ] = None,
    elicit: Annotated[
        bool, typer.Option("--elicit", help="Ask the MCP client's user in-band when the client can.")
    ] = False,
    elicit_as: Annotated[
        str | None,
        typer.Option(
            "--elicit-as",
            metavar="USER",
            help="The person an in-band answer is recorded as "
            f"(through a server: the owner of ${ELICIT_TOKEN_ENV}).",
        ),
    ] = None,
    progress_interval: Annotated[
        float, typer.Option("--progress-interval", min=0.01, help="Seconds between progress notifications.")
    ] = 1.0,
    upstream_timeout: Annotated[
        float, typer.Option("--upstream-timeout", min=0.01, help="Seconds the upstream may take to answer.")
    ] = 300.0,
) -> None:
    """Run an MCP server behind signoff: its tool calls ask a person when the rules say so."""
    try:
        import anyio

        from ..mcp import ProxyOptions, UpstreamTarget, serve
        from ..mcp.elicit import ElicitDecider
    except ImportError as exc:
        raise CliError(f"signoff mcp-proxy needs the MCP SDK: pip install 'signoff[mcp]' ({exc})") from None
    from ..gate import Gate

    if not name.strip():
        raise CliInputError("--name NAME is required: the service the upstream's tools belong to")
    if bool(command) == bool(upstream_url):
        raise CliInputError("give the upstream either as `-- COMMAND ARGS...` or as --upstream-url URL")
    if thread is not None and not thread.strip():
        raise CliInputError("--thread KEY: give a key, e.g. the name of the client's workspace")
    state = state_of(ctx)
    server_url = url or state.server_url
    backing = _backing(state, url)
    agent = _agent(backing, agent)
    rules = RuleSet.from_file(config) if config is not None else None
    decider = None
    if elicit:
        decider = _decider(backing, server_url, elicit_as, ElicitDecider)
    options = ProxyOptions(
        service=name.strip(),
        target=UpstreamTarget(command=list(command or []), url=upstream_url),
        agent=agent,
        thread=thread.strip() if thread is not None else None,
        listen=_listen(listen) if listen else None,
        max_wait=max_wait,
        progress_interval=progress_interval,
        upstream_timeout=upstream_timeout,
        inbox=server_url,
        decider=decider,
        follow_rules=rules is None,
    )
    gate = Gate(backing, rules=rules)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            anyio.run(serve, options, gate)
    except Exception as exc:  # the upstream would not start, the port is taken, ...: one clear line
        raise CliError(f"mcp-proxy stopped: {_first_cause(exc)}") from None


def _first_cause(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    message = getattr(getattr(exc, "error", None), "message", None) or str(exc) or type(exc).__name__
    return f"{message} (is the upstream command right?)" if "Connection closed" in message else message


def _backing(state: Any, url: str | None) -> Backing:
    if url is None:
        backing: Backing = state.store()
        return backing
    token = state.token or os.environ.get(TOKEN_ENV)
    if not token:
        raise CliError(f"--url {url}: set {TOKEN_ENV} to the agent token the proxy asks with")
    return open_backend(None, url=url, token=token)


def _agent(backing: Backing, agent: str | None) -> str | None:
    """The agent whose rules apply: through a server the token's user (an `--agent` must be it),
    else `--agent`. Never the name the MCP client gives itself."""
    chosen = agent.strip() if agent is not None else None
    if chosen == "":
        raise CliInputError("--agent NAME: give the agent's name")
    if isinstance(backing, Client):
        me = backing.me()
        if chosen is not None and chosen != me.name:
            raise CliInputError(
                f"--agent {chosen}: through a server the agent is the token's user, {me.name}; "
                "leave --agent out or give that name"
            )
        return me.name
    return chosen


def _decider(backing: Backing, server_url: str | None, elicit_as: str | None, make: Any) -> Any:
    """Who an in-band answer is recorded as: a person, never the proxy's agent."""
    if isinstance(backing, Client):
        token = os.environ.get(ELICIT_TOKEN_ENV)
        if not token:
            raise CliError(
                f"--elicit through a server records the answer as a person: set {ELICIT_TOKEN_ENV} to "
                "the token of the person at the MCP client (the proxy's own token is an agent's)"
            )
        assert server_url is not None
        person = Client(server_url, token)
        me = person.me()
        if me.is_agent:
            raise CliError(f"{ELICIT_TOKEN_ENV} belongs to {me.name}, an agent; agents never decide")
        return make(person, me.name)
    if not elicit_as or not elicit_as.strip():
        raise CliInputError("--elicit needs --elicit-as USER: the person at the MCP client who answers")
    user = backing.get_user(elicit_as.strip())
    if user is not None and (user.is_agent or user.disabled):
        raise CliError(
            f"--elicit-as {elicit_as}: {user.name} is {'an agent' if user.is_agent else 'disabled'}"
        )
    return make(backing, elicit_as.strip())


def _listen(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise CliInputError(f"--listen {value}: give HOST:PORT, e.g. 127.0.0.1:8765")
    return host.strip("[]"), int(port)
