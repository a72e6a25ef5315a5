"""An aiohttp connector that connects only where `Destinations` allows (the webhook sender's).

A name is resolved once, every address it resolves to is checked, and aiohttp connects to those
very addresses (no second lookup a rebinding name could answer differently). An address in the
URL itself skips aiohttp's resolver, so each socket is checked again just before it connects:
the last word, whatever led to it.
"""

from __future__ import annotations

import socket
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from .policy import Destinations, PrivateDestination


class CheckedResolver(AbstractResolver):
    """aiohttp's own resolver, refusing a name that any of its addresses makes private."""

    def __init__(self, destinations: Destinations) -> None:
        self._destinations = destinations
        self._resolver = aiohttp.DefaultResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        found = await self._resolver.resolve(host, port, family=family)
        for entry in found:
            self._destinations.check_address(entry["host"], host=host)
        return found

    async def close(self) -> None:
        await self._resolver.close()


def connector(destinations: Destinations, **options: Any) -> aiohttp.TCPConnector:
    """A `TCPConnector` (with `options`) whose connections go only where `destinations` allows."""

    def checked_socket(addr_info: Any) -> socket.socket:
        family, kind, proto, _, address = addr_info
        destinations.check_address(str(address[0]))
        return socket.socket(family=family, type=kind, proto=proto)

    return aiohttp.TCPConnector(
        resolver=CheckedResolver(destinations), socket_factory=checked_socket, **options
    )


def refusal_in(exc: BaseException) -> PrivateDestination | None:
    """The `PrivateDestination` behind an aiohttp error (its `os_error`, or a cause), if any."""
    seen: BaseException | None = exc
    while seen is not None:
        inner = getattr(seen, "os_error", seen)
        if isinstance(inner, PrivateDestination):
            return inner
        seen = seen.__cause__ or seen.__context__
    return None


__all__ = ["CheckedResolver", "connector", "refusal_in"]
