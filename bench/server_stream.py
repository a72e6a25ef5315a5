"""One admin's SSE stream (`GET /v1/events`) held open while a batch of calls runs: an open inbox
tab, which makes the server's event feed follow every change (and, on SQLite, starts its change
watcher). Read as raw bytes in the load generator's loop; its `decided` events are counted, so a
batch can wait until the stream has had them all (the server's CPU for sending them counted)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

OPEN_SECONDS = 30.0


class Stream:
    def __init__(self) -> None:
        self.decided = 0
        self._seen = bytearray()
        self._opened = asyncio.Event()
        self._progressed = asyncio.Event()

    def take(self, chunk: bytes) -> None:
        self._seen.extend(chunk)
        if not self._opened.is_set() and (self._seen.startswith(b"id: ") or b"\nid: " in self._seen):
            self._opened.set()
        counted = self._seen.count(b"event: decided\n")
        if counted != self.decided:
            self.decided = counted
            self._progressed.set()

    async def until_decided(self, count: int) -> bool:
        """Until the stream has had `count` decided events; False if `OPEN_SECONDS` pass without one."""
        while self.decided < count:
            self._progressed.clear()
            try:
                await asyncio.wait_for(self._progressed.wait(), OPEN_SECONDS)
            except TimeoutError:
                return False
        return True


@asynccontextmanager
async def admin_stream(url: str, token: str) -> AsyncIterator[Stream]:
    """The stream, open (its start point read) for the block."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(
        f"GET /v1/events HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {token}\r\n"
        "Accept: text/event-stream\r\n\r\n".encode()
    )
    stream = Stream()

    async def read() -> None:
        while chunk := await reader.read(65536):
            stream.take(chunk)

    reading = asyncio.create_task(read())
    try:
        await asyncio.wait_for(stream._opened.wait(), OPEN_SECONDS)
        yield stream
    finally:
        reading.cancel()
        writer.close()
