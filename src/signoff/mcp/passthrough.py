"""Ungated `tools/call` over stdio, passed through as JSON-RPC lines.

Through the SDK, a call nobody is asked about costs the proxy a dozen event-loop turns each
way (the server's dispatch, a task per request, the client session's response streams), as
much again as the call itself. So on a stdio connection in the handshake era, a `tools/call`
line is looked at before the SDK reads it: when the catalog knows the tool and the rules ask
about no such call, it goes to the upstream under an id of the proxy's own, and the upstream's
answer comes back to the client under the client's id, its result as the upstream wrote it.
Everything else (a gated call, an unknown or not yet listed tool, an upstream that is gone, the
2026-07-28 era, `_meta` other than a progress token) takes the SDK's way, where it is answered
as before.

The pass-through keeps what the SDK's way does for such a call: the client's progress token
(rewritten to one of the proxy's, so it cannot meet the proxy's own) and the upstream's
progress on it; the client's cancellation, passed on; the upstream timeout; a clear error for
each call in flight when the upstream exits.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mcp.types as types
from mcp.shared.message import SessionMessage
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from .catalog import ToolCatalog
from .upstream import Upstream

log = logging.getLogger("signoff.mcp")

ID_PREFIX = "signoff-pass-"
"""The ids (and progress tokens) the proxy gives the calls it passes through: strings, where
the SDK's own client session numbers its requests."""

WriteLine = Callable[[str], None]
Asks = Callable[[str, dict[str, Any], dict[str, Any]], bool]
"""(tool, args, annotations) → whether the rules ask about the call (for the proxy's agent)."""


@dataclass
class _InFlight:
    client_id: types.RequestId
    client_token: types.ProgressToken | None
    timer: asyncio.TimerHandle | None


class Passthrough:
    def __init__(self, upstream: Upstream, catalog: ToolCatalog, asks: Asks) -> None:
        self.upstream = upstream
        self.catalog = catalog
        self.asks = asks
        self._write: WriteLine | None = None
        self._numbers = itertools.count(1)
        self._in_flight: dict[str, _InFlight] = {}
        self._by_client_id: dict[types.RequestId, str] = {}
        self._sending: set[asyncio.Future[None]] = set()
        self._handshake = False
        """An `initialize` in a handshake-era version was seen: the client takes upstream
        answers as they are (the 2026-07-28 era's results need fields the proxy adds)."""

    def attach(self, write_line: WriteLine) -> None:
        """Where lines to the client go (the same stdout the SDK's session writes whole lines to)."""
        self._write = write_line

    # -- from the client ----------------------------------------------------------------------

    async def take(self, line: str) -> bool:
        """Whether `line` from the client was handled here (else the SDK reads it)."""
        if '"tools/call"' in line:
            return await self._call(line)
        if '"notifications/cancelled"' in line:
            return await self._cancelled(line)
        if '"initialize"' in line:
            self._initialize(line)
        return False

    def _initialize(self, line: str) -> None:
        message = _object(line)
        if message is None or message.get("method") != "initialize":
            return
        params = message.get("params")
        if not isinstance(params, dict):
            return
        version = params.get("protocolVersion")
        self._handshake = isinstance(version, str) and version not in MODERN_PROTOCOL_VERSIONS

    async def _call(self, line: str) -> bool:
        if self._write is None or not self._handshake or self.upstream.closed.is_set():
            return False
        message = _object(line)
        if message is None or message.get("method") != "tools/call" or "id" not in message:
            return False
        client_id = message["id"]
        params = message.get("params")
        if (
            not isinstance(client_id, int | str)
            or isinstance(client_id, bool)
            or not isinstance(params, dict)
        ):
            return False
        name, args, meta = params.get("name"), params.get("arguments", {}), params.get("_meta")
        if not isinstance(name, str) or not isinstance(args, dict):
            return False
        token = None
        if meta is not None:
            if not isinstance(meta, dict) or set(meta) - {"progressToken"}:
                return False
            token = meta.get("progressToken")
        known = self.catalog.known(name)
        if known is None or self.asks(name, args, known):
            return False
        ours = f"{ID_PREFIX}{next(self._numbers)}"
        forwarded: dict[str, Any] = {"name": name, "arguments": args}
        if token is not None:
            forwarded["_meta"] = {"progressToken": ours}
        self._in_flight[ours] = _InFlight(client_id, token, self._timer(ours))
        self._by_client_id[client_id] = ours
        await self._send(types.JSONRPCRequest(jsonrpc="2.0", id=ours, method="tools/call", params=forwarded))
        return True

    async def _cancelled(self, line: str) -> bool:
        message = _object(line)
        if message is None or message.get("method") != "notifications/cancelled":
            return False
        params = message.get("params")
        if not isinstance(params, dict):
            return False
        request_id = params.get("requestId")
        if isinstance(request_id, bool) or not isinstance(request_id, int | str):
            return False  # the SDK's session answers what it makes of it
        ours = self._by_client_id.get(request_id)
        if ours is None:
            return False  # not one of ours: the SDK's session cancels its own
        self._forget(ours)
        reason = params.get("reason")
        await self._send(_cancel(ours, reason if isinstance(reason, str) else None))
        return True

    # -- from the upstream --------------------------------------------------------------------

    def tap(self, message: SessionMessage) -> bool:
        """Whether the upstream's `message` belongs to a call passed through (then it was
        answered to the client here); else the proxy's client session reads it."""
        root = message.message
        if isinstance(root, types.JSONRPCResponse | types.JSONRPCError):
            if not isinstance(root.id, str) or not root.id.startswith(ID_PREFIX):
                return False
            flight = self._forget(root.id)
            if flight is not None:
                self._to_client(root.model_copy(update={"id": flight.client_id}))
            return True
        if isinstance(root, types.JSONRPCNotification) and root.method == "notifications/progress":
            token = (root.params or {}).get("progressToken")
            if not isinstance(token, str) or not token.startswith(ID_PREFIX):
                return False
            flight = self._in_flight.get(token)
            if flight is not None and flight.client_token is not None:
                params = {**(root.params or {}), "progressToken": flight.client_token}
                self._to_client(root.model_copy(update={"params": params}))
            return True
        return False

    def upstream_gone(self, why: str) -> None:
        """The upstream exited: each call in flight gets the error the SDK's way gives."""
        for ours in list(self._in_flight):
            self._fail(ours, why)

    # -- plumbing -----------------------------------------------------------------------------

    def _timer(self, ours: str) -> asyncio.TimerHandle | None:
        timeout = self.upstream.timeout
        if timeout is None:
            return None

        def expired() -> None:
            upstream = self.upstream.target.describe()
            why = f"the upstream MCP server ({upstream}) did not answer within {timeout} s"
            if self._fail(ours, why):
                task = asyncio.ensure_future(self._send(_cancel(ours, why)))
                self._sending.add(task)
                task.add_done_callback(self._sending.discard)

        return asyncio.get_running_loop().call_later(timeout, expired)

    def _fail(self, ours: str, why: str) -> bool:
        flight = self._forget(ours)
        if flight is None:
            return False
        error = types.ErrorData(code=types.INTERNAL_ERROR, message=why)
        self._to_client(types.JSONRPCError(jsonrpc="2.0", id=flight.client_id, error=error))
        return True

    def _forget(self, ours: str) -> _InFlight | None:
        flight = self._in_flight.pop(ours, None)
        if flight is not None:
            self._by_client_id.pop(flight.client_id, None)
            if flight.timer is not None:
                flight.timer.cancel()
        return flight

    def _to_client(self, message: types.JSONRPCMessage) -> None:
        assert self._write is not None
        self._write(message.model_dump_json(by_alias=True, exclude_unset=True) + "\n")

    async def _send(self, message: types.JSONRPCMessage) -> None:
        try:
            await self.upstream.send(SessionMessage(message))
        except Exception as exc:  # the upstream's pipe is closed: its end is reported as it comes
            log.info("could not pass a message to the upstream: %s", exc)
            if isinstance(message, types.JSONRPCRequest):
                self._fail(
                    str(message.id),
                    f"the upstream MCP server ({self.upstream.target.describe()}) is not running",
                )


def _object(line: str) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None  # the SDK answers it with a parse error
    return value if isinstance(value, dict) else None


def _cancel(ours: str, reason: str | None) -> types.JSONRPCNotification:
    params: dict[str, Any] = {"requestId": ours}
    if reason is not None:
        params["reason"] = reason
    return types.JSONRPCNotification(jsonrpc="2.0", method="notifications/cancelled", params=params)
