"""The upstream MCP server the proxy wraps: a subprocess over stdio or a streamable-HTTP URL.

The proxy talks to it with the SDK's `ClientSession` in the handshake era (every MCP server
speaks it) and passes its answers on as the raw JSON it sent (`RAW`), so what the client gets
is what the upstream said, field for field. The connection's end (a crash, a closed pipe) is
watched: `closed` is set and the proxy's `on_closed` callback runs once.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client._transport import WriteStream
from mcp.client.session import IncomingMessage
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from pydantic import TypeAdapter

log = logging.getLogger("signoff.mcp")

RAW: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])
"""An answer as the upstream sent it (checked by the SDK against the protocol, not re-shaped)."""

STARTUP_TIMEOUT = 60.0
"""Seconds the upstream may take to start and answer `initialize`."""

Notify = Callable[[types.ServerNotification], Awaitable[None]]


class UpstreamGone(Exception):
    """The upstream closed the connection (it crashed or exited) or did not answer in time."""


@dataclass(frozen=True)
class UpstreamTarget:
    """How to reach the upstream: `command` (stdio) or `url` (streamable HTTP)."""

    command: list[str] = field(default_factory=list)
    url: str | None = None

    def describe(self) -> str:
        return self.url if self.url is not None else " ".join(self.command)


class Upstream:
    """One live connection to the upstream server."""

    def __init__(
        self,
        session: ClientSession,
        target: UpstreamTarget,
        timeout: float | None,
        wire: WriteStream[SessionMessage],
    ) -> None:
        self.session = session
        self.target = target
        self.timeout = timeout
        self.closed = anyio.Event()
        self.init: types.InitializeResult | None = None
        self.tap: Callable[[SessionMessage], bool] | None = None
        """Shown each message from the upstream first; True: it was handled, the session
        does not see it (the pass-through's answers)."""
        self._wire = wire

    async def send(self, message: SessionMessage) -> None:
        """Write a JSON-RPC message to the upstream as it is, beside the session's own."""
        await self._wire.send(message)

    @property
    def capabilities(self) -> types.ServerCapabilities:
        assert self.init is not None
        return self.init.capabilities

    async def request(
        self,
        request: types.ClientRequest | types.Request[Any, Any],
        *,
        on_progress: Any = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Send `request`; the raw result. UpstreamGone if the connection is closed or it hangs."""
        if self.closed.is_set():
            raise UpstreamGone(f"the upstream MCP server ({self.target.describe()}) is not running")
        try:
            return await self.session.send_request(  # type: ignore[type-var]  # a TypeAdapter is accepted
                request,
                RAW,
                request_read_timeout_seconds=timeout if timeout is not None else self.timeout,
                progress_callback=on_progress,
            )
        except MCPError as exc:
            if exc.error.code == types.CONNECTION_CLOSED or self.closed.is_set():
                self.closed.set()
                raise UpstreamGone(
                    f"the upstream MCP server ({self.target.describe()}) closed the connection"
                ) from None
            if exc.error.code == types.REQUEST_TIMEOUT:
                raise UpstreamGone(
                    f"the upstream MCP server ({self.target.describe()}) did not answer within "
                    f"{timeout if timeout is not None else self.timeout} s"
                ) from None
            raise


@asynccontextmanager
async def connect(
    target: UpstreamTarget,
    *,
    on_notification: Notify,
    on_closed: Callable[[], Awaitable[None]],
    timeout: float | None,
    client_info: types.Implementation,
) -> AsyncIterator[Upstream]:
    """Start (or reach) the upstream, initialize it, and yield the connection."""
    async with AsyncExitStack() as stack:
        if target.url is not None:
            read, write = await stack.enter_async_context(streamable_http_client(target.url))
        else:
            params = StdioServerParameters(command=target.command[0], args=target.command[1:])
            read, write = await stack.enter_async_context(stdio_client(params, errlog=sys.stderr))
        watched_send, watched = anyio.create_memory_object_stream[SessionMessage | Exception](16)
        upstream_box: list[Upstream] = []

        async def relay() -> None:
            """Copy the upstream's messages through, and notice when they end."""
            async with watched_send:
                try:
                    async for message in read:
                        tap = upstream_box[0].tap if upstream_box else None
                        if tap is not None and isinstance(message, SessionMessage) and tap(message):
                            continue
                        await watched_send.send(message)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    pass
            if upstream_box:
                upstream_box[0].closed.set()
            with anyio.CancelScope(shield=True):
                await on_closed()

        async def on_message(message: IncomingMessage) -> None:
            if isinstance(message, Exception):
                log.warning("upstream transport error: %s", message)
                return
            await on_notification(message)

        task_group = await stack.enter_async_context(anyio.create_task_group())
        task_group.start_soon(relay)
        session = await stack.enter_async_context(
            ClientSession(
                watched,
                write,
                message_handler=on_message,
                client_info=client_info,
            )
        )
        upstream = Upstream(session, target, timeout, write)
        upstream_box.append(upstream)
        with anyio.fail_after(STARTUP_TIMEOUT):
            upstream.init = await session.initialize()
        try:
            yield upstream
        finally:
            task_group.cancel_scope.cancel()
