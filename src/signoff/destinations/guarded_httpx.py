"""An httpx client that connects only where `Destinations` allows (the text channel's).

httpx resolves names inside its connection pool, so the check sits in the pool's network
backend: the name is resolved once, every address it resolves to is checked, and the connection
goes to a checked address (TLS still verifies the URL's host name). A refused connection raises
`PrivateDestination`, which httpx passes through as it is. Environment proxies are not used:
a proxy would resolve the name itself, past the check.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable
from typing import Any

import anyio
import httpcore
import httpx

from .addresses import host_address
from .policy import Destinations


class CheckedBackend(httpcore.AsyncNetworkBackend):
    def __init__(self, destinations: Destinations) -> None:
        self._destinations = destinations
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        literal = host_address(host)
        if literal is not None:
            addresses = [str(literal)]
        else:
            try:
                with anyio.fail_after(timeout):
                    found = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except TimeoutError:
                raise httpcore.ConnectTimeout(f"resolving {host} timed out") from None
            except OSError as exc:
                raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from None
            addresses = list(dict.fromkeys(str(entry[4][0]) for entry in found))
        for address in addresses:
            self._destinations.check_address(address, host=host)
        failure: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None, "getaddrinfo answers at least one address or raises"
        raise failure

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("configured URLs are reached over TCP only")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class CheckedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport over a pool whose connections go through `CheckedBackend` (httpx takes
    no network backend of its own, so the pool it made is replaced)."""

    def __init__(self, destinations: Destinations) -> None:
        super().__init__(trust_env=False)
        limits = httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=CheckedBackend(destinations),
        )


def checked_client(destinations: Destinations) -> httpx.AsyncClient:
    """An `httpx.AsyncClient` whose connections go only where `destinations` allows."""
    return httpx.AsyncClient(transport=CheckedTransport(destinations), trust_env=False)


__all__ = ["CheckedBackend", "CheckedTransport", "checked_client"]
