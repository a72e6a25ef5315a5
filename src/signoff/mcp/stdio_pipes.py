"""The proxy's stdio without a thread per line.

The SDK's `stdio_server` reads stdin and writes stdout through `anyio.wrap_file`: each line is
a hop to a worker thread and back, which is most of what a proxied call costs. This hands it
the same two descriptors as asyncio pipe streams instead (its `stdin`/`stdout` parameters),
after moving them aside as the SDK does (fd 0 reads nothing, fd 1 goes to stderr, so stray
output cannot corrupt the wire). Where they are not pipes (a regular file, say), the SDK's own
transport is used (and no call is passed through: `passthrough`).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from mcp.server.stdio import stdio_server

from .passthrough import Passthrough

Take = Callable[[str], Awaitable[bool]]
"""Shown each line from the client first; True: it was handled, the SDK does not read it."""


class _Lines:
    def __init__(self, reader: asyncio.StreamReader, take: Take | None) -> None:
        self._reader = reader
        self._take = take

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self._reader.readline()
            if not line:
                raise StopAsyncIteration
            text = line.decode("utf-8", errors="replace")
            if self._take is None or not await self._take(text):
                return text


class _Writer:
    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


@asynccontextmanager
async def _over_pipes(passthrough: Passthrough | None) -> AsyncIterator[Any]:
    loop = asyncio.get_running_loop()
    wire_in, wire_out = os.dup(0), os.dup(1)
    try:
        reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", 0)
        )
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", 0)
        )
    except (OSError, ValueError):
        os.close(wire_in)
        os.close(wire_out)
        raise
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    if passthrough is not None:
        passthrough.attach(lambda text: writer.write(text.encode("utf-8")))
    saved_in, saved_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    try:
        take = passthrough.take if passthrough is not None else None
        lines, out = _Lines(reader, take), _Writer(writer)
        async with stdio_server(stdin=lines, stdout=out) as streams:  # type: ignore[arg-type]
            yield streams
    finally:
        transport.close()
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)


def stdio_streams(passthrough: Passthrough | None = None) -> AbstractAsyncContextManager[Any]:
    """The proxy's stdio; `passthrough` sees the client's lines first (on pipes only)."""
    if sys.platform == "win32" or not _pipes(0, 1):
        return stdio_server()
    return _over_pipes(passthrough)


def _pipes(*fds: int) -> bool:
    import stat

    try:
        return all(stat.S_ISFIFO(os.fstat(fd).st_mode) or stat.S_ISSOCK(os.fstat(fd).st_mode) for fd in fds)
    except OSError:
        return False
