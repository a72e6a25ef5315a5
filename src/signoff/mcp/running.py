"""Running the proxy: reach the upstream, say which of its tools ask, then serve MCP over stdio
or streamable HTTP.

The proxy is a component that declares its service in code (`Gate.component`): `--name` with a
`ServiceEntry()`'s defaults, `approval_mode: all`, beneath the rules in force, which override it
field by field (a service entry of the same name with its own mode wins; `requires_approval:
false` there turns it off). So a service nothing configures asks before every tool.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import anyio
import mcp.types as types

from .. import __version__
from ..gate import Gate
from ..rules.model import ServiceEntry
from .announce import Gating, describe, describe_change, gating_of, say
from .catalog import ToolCatalog
from .elicit import ElicitDecider
from .gating import CallGate, GateOptions
from .passthrough import Passthrough
from .proxy import Peers, build_server, on_upstream_notification
from .sessions import Sessions
from .stdio_pipes import stdio_streams
from .upstream import Upstream, UpstreamGone, UpstreamTarget, connect

log = logging.getLogger("signoff.mcp")

CLIENT_INFO = types.Implementation(name="signoff-mcp-proxy", version=__version__)


@dataclass(frozen=True)
class ProxyOptions:
    service: str
    target: UpstreamTarget
    agent: str | None = None
    """The agent whose rules apply (`--agent`; through a server, its token's user)."""
    thread: str | None = None
    """The operator's key for the proxy's thread (`--thread`): a restarted proxy with the same
    key finds the same requests, so a client's retry continues its call."""
    listen: tuple[str, int] | None = None
    max_wait: float | None = None
    progress_interval: float = 1.0
    upstream_timeout: float | None = 300.0
    inbox: str | None = None
    decider: ElicitDecider | None = None
    follow_rules: bool = field(default=True)
    """The gate reads its rules from the store (they may change): re-read them as it would."""


async def serve(options: ProxyOptions, gate: Gate) -> None:
    gate = gate.component(services={options.service: ServiceEntry()})
    catalog = ToolCatalog()
    peers = Peers()
    sessions = Sessions(options.service, options.thread)
    gates: list[CallGate] = []
    passthroughs: list[Passthrough] = []
    changes = [anyio.Event()]
    """Set when the upstream says its tools changed (replaced once seen)."""

    async def on_notification(notification: types.ServerNotification) -> None:
        if isinstance(notification, types.ToolListChangedNotification):
            changes[0].set()
        await on_upstream_notification(notification, catalog, peers)

    async def on_closed() -> None:
        gone = f"the upstream MCP server ({options.target.describe()}) closed the connection"
        log.error("%s", gone)
        for passthrough in passthroughs:
            passthrough.upstream_gone(gone)
        for call_gate in gates:
            await call_gate.cancel_open(f"the upstream MCP server {options.service!r} exited")

    async with connect(
        options.target,
        on_notification=on_notification,
        on_closed=on_closed,
        timeout=options.upstream_timeout,
        client_info=CLIENT_INFO,
    ) as upstream:
        gate_options = GateOptions(
            service=options.service,
            agent=options.agent,
            max_wait=options.max_wait,
            progress_interval=options.progress_interval,
            inbox=options.inbox,
            decider=options.decider,
        )

        def current() -> Upstream:
            return upstream

        call_gate = CallGate(gate, gate_options, current, catalog, sessions)
        gates.append(call_gate)
        server = build_server(upstream, call_gate, catalog, peers)
        gating = await _announce(call_gate, upstream, options)
        async with anyio.create_task_group() as tasks:
            if options.follow_rules:
                tasks.start_soon(call_gate.keep_rules_fresh)
            if gating is not None:
                tasks.start_soon(_announce_changes, call_gate, upstream, options, gating, changes)
            if options.listen is None:
                passthrough = None
                if options.target.url is None:  # both ends stdio: ungated calls pass as lines
                    passthrough = Passthrough(upstream, catalog, call_gate.asks)
                    passthroughs.append(passthrough)
                    upstream.tap = passthrough.tap
                async with stdio_streams(passthrough) as (read, write):
                    await server.run(read, write, server.create_initialization_options())
            else:
                await _serve_http(server, *options.listen)
            tasks.cancel_scope.cancel()


async def _announce(call_gate: CallGate, upstream: Upstream, options: ProxyOptions) -> Gating | None:
    """Say on stderr which of the upstream's tools ask and which pass; None: it has no tools."""
    if upstream.capabilities.tools is None:
        say([f"signoff mcp-proxy {options.service}: the upstream offers no tools; nothing to gate"])
        return None
    await call_gate.catalog.refresh(upstream)
    gating = gating_of(call_gate.resolver, options.service, options.agent, call_gate.catalog.tools())
    say(describe(gating, options.service, options.agent))
    return gating


async def _announce_changes(
    call_gate: CallGate, upstream: Upstream, options: ProxyOptions, gating: Gating, changes: list[anyio.Event]
) -> None:
    """Each time the upstream says its tools changed: read them again and say what changed."""
    while True:
        await changes[0].wait()
        changes[0] = anyio.Event()
        try:
            await call_gate.catalog.refresh(upstream)
        except UpstreamGone:
            return
        now = gating_of(call_gate.resolver, options.service, options.agent, call_gate.catalog.tools())
        say(describe_change(gating, now, options.service))
        gating = now


async def _serve_http(server: object, host: str, port: int) -> None:
    import uvicorn

    from .proxy import ProxyServer

    assert isinstance(server, ProxyServer)
    app = server.streamable_http_app(streamable_http_path="/mcp", host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()
