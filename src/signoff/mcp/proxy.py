"""The proxy's MCP server: the upstream's tools, resources and prompts re-exposed as they are
(names, schemas, annotations, pagination cursors: its raw answers), `tools/call` gated, and
the upstream's list-changed and resource-updated notifications passed on to the clients (in
the 2026-07-28 era, on the `subscriptions/listen` streams they open)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import mcp.types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError
from mcp.types.methods import CACHEABLE_METHODS
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

from .catalog import ToolCatalog
from .gating import CallGate, http_session_of
from .upstream import Upstream, UpstreamGone

log = logging.getLogger("signoff.mcp")

Handler = Callable[[ServerRequestContext[Any, Any], Any], Awaitable[Any]]


class ProxyServer(Server[Any]):
    """A lowlevel `Server` that advertises the upstream's list-changed notifications (the
    streamable-HTTP transport builds its initialization options without arguments)."""

    notification_options = NotificationOptions()

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or self.notification_options, experimental_capabilities, extensions
        )


class Peers:
    """Where the upstream's change notifications go: the handshake-era client sessions seen so
    far (sent to each), and the 2026-07-28 era's `subscriptions/listen` streams (published on
    `bus`, which the SDK's `ListenHandler` serves, each stream getting what it asked for)."""

    def __init__(self) -> None:
        self._by_session: dict[str, ServerSession] = {}
        self.bus = InMemorySubscriptionBus()

    def seen(self, ctx: ServerRequestContext[Any, Any]) -> None:
        key = http_session_of(ctx) or "stdio"
        self._by_session[key] = ctx.session

    async def notify(self, notification: types.ServerNotification) -> None:
        event = _event_of(notification)
        if event is not None:
            await self.bus.publish(event)
        for key, session in list(self._by_session.items()):
            try:
                await session.send_notification(notification)
            except Exception as exc:  # a client gone away: forget it, tell the others
                log.info("dropping MCP client %s: %s", key, exc)
                self._by_session.pop(key, None)


def _event_of(notification: types.ServerNotification) -> ServerEvent | None:
    if isinstance(notification, types.ToolListChangedNotification):
        return ToolsListChanged()
    if isinstance(notification, types.PromptListChangedNotification):
        return PromptsListChanged()
    if isinstance(notification, types.ResourceListChangedNotification):
        return ResourcesListChanged()
    if isinstance(notification, types.ResourceUpdatedNotification):
        return ResourceUpdated(uri=str(notification.params.uri))
    return None


def without_meta(params: BaseModel | None) -> Any:
    """The client's params as the upstream gets them: without `_meta` (its progress token and
    2026-era envelope are the proxy's own connection's business)."""
    if params is None or getattr(params, "meta", None) is None:
        return params
    return params.model_copy(update={"meta": None})


def for_client(ctx: ServerRequestContext[Any, Any], method: str, raw: dict[str, Any]) -> dict[str, Any]:
    """An upstream answer (handshake era) as this client's era wants it: unchanged, or on a
    2026-07-28 connection with the fields that era requires (`resultType`, and for the
    listings the cache hints `ttlMs: 0`, `cacheScope: private`, as the upstream gave none)."""
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return raw
    shaped = {"resultType": "complete", **raw}
    if method in CACHEABLE_METHODS:
        shaped = {"ttlMs": 0, "cacheScope": "private", **shaped}
    return shaped


def build_server(upstream: Upstream, gate: CallGate, catalog: ToolCatalog, peers: Peers) -> ProxyServer:
    capabilities = upstream.capabilities
    init = upstream.init
    assert init is not None

    def passing(request_type: type[Any]) -> Handler:
        method = request_type.model_fields["method"].default

        async def handler(ctx: ServerRequestContext[Any, Any], params: Any) -> Any:
            peers.seen(ctx)
            try:
                raw = await upstream.request(request_type(params=without_meta(params)))
            except UpstreamGone as exc:
                raise MCPError(code=types.INTERNAL_ERROR, message=str(exc)) from None
            return for_client(ctx, method, raw)

        return handler

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> Any:
        peers.seen(ctx)
        try:
            listing = await upstream.request(types.ListToolsRequest(params=without_meta(params)))
        except UpstreamGone as exc:
            raise MCPError(code=types.INTERNAL_ERROR, message=str(exc)) from None
        catalog.absorb(listing, first_page=params is None or params.cursor is None)
        return for_client(ctx, "tools/list", listing)

    async def call_tool(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> Any:
        peers.seen(ctx)
        result = await gate.call(ctx, params)
        return (
            result if isinstance(result, types.InputRequiredResult) else for_client(ctx, "tools/call", result)
        )

    handlers: dict[str, Any] = {}
    if capabilities.tools is not None:
        handlers.update(on_list_tools=list_tools, on_call_tool=call_tool)
    if capabilities.resources is not None:
        handlers.update(
            on_list_resources=passing(types.ListResourcesRequest),
            on_list_resource_templates=passing(types.ListResourceTemplatesRequest),
            on_read_resource=passing(types.ReadResourceRequest),
        )
        if capabilities.resources.subscribe:
            handlers.update(
                on_subscribe_resource=passing(types.SubscribeRequest),
                on_unsubscribe_resource=passing(types.UnsubscribeRequest),
            )
    if capabilities.prompts is not None:
        handlers.update(
            on_list_prompts=passing(types.ListPromptsRequest), on_get_prompt=passing(types.GetPromptRequest)
        )
    if capabilities.completions is not None:
        handlers.update(on_completion=passing(types.CompleteRequest))
    if _changes_listed(capabilities):  # the 2026-07-28 era hears of them on a listen stream
        handlers.update(on_subscriptions_listen=ListenHandler(peers.bus))
    server = ProxyServer(
        init.server_info.name,
        version=init.server_info.version,
        title=init.server_info.title,
        instructions=init.instructions,
        **handlers,
    )
    server.middleware = []  # no OpenTelemetry span per message: a proxy's hop should cost little
    server.notification_options = NotificationOptions(
        prompts_changed=bool(capabilities.prompts and capabilities.prompts.list_changed),
        resources_changed=bool(capabilities.resources and capabilities.resources.list_changed),
        tools_changed=bool(capabilities.tools and capabilities.tools.list_changed),
    )
    return server


def _changes_listed(capabilities: types.ServerCapabilities) -> bool:
    return any(
        capability is not None and capability.list_changed
        for capability in (capabilities.tools, capabilities.prompts, capabilities.resources)
    )


PASSED_ON = (
    types.ToolListChangedNotification,
    types.ResourceListChangedNotification,
    types.PromptListChangedNotification,
    types.ResourceUpdatedNotification,
)


async def on_upstream_notification(
    notification: types.ServerNotification, catalog: ToolCatalog, peers: Peers
) -> None:
    if isinstance(notification, types.ToolListChangedNotification):
        catalog.invalidate()
    if isinstance(notification, PASSED_ON):
        await peers.notify(notification)
