"""The server benchmarks' load generator: POSTs over keep-alive HTTP/1.1 connections, CLIENTS at once."""

from __future__ import annotations

import asyncio
import time

from output import progress

CLIENTS = 32
"""Connections `post_all` opens: concurrent agents or people."""


class KeepAliveConnection:
    """A minimal HTTP/1.1 keep-alive client for the load generator: httpx's own per-request cost
    (about 1 ms of CPU here) would otherwise be what the throughput measures, since the clients
    share this machine's two cores with the server."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str) -> None:
        self.reader = reader
        self.writer = writer
        self.host = host

    @classmethod
    async def open(cls, url: str) -> KeepAliveConnection:
        host, port = url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        return cls(reader, writer, f"{host}:{port}")

    async def post_json(self, path: str, body: bytes, token: str) -> tuple[int, bytes]:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        self.writer.write(head.encode() + body)
        status_line = await self.reader.readline()
        status = int(status_line.split()[1])
        length = 0
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return status, await self.reader.readexactly(length)

    def close(self) -> None:
        self.writer.close()


async def post_all(url: str, token: str, calls: list[tuple[str, bytes]], expect: int) -> tuple[float, int]:
    """POST each (path, body) over CLIENTS keep-alive connections; (seconds, failures)."""
    pending = list(reversed(calls))
    failures = 0
    connections = [await KeepAliveConnection.open(url) for _ in range(CLIENTS)]

    async def worker(connection: KeepAliveConnection) -> None:
        nonlocal failures
        while pending:
            path, body = pending.pop()
            status, answer = await connection.post_json(path, body, token)
            if status != expect:
                failures += 1
                if failures == 1:
                    progress(f"a call failed: {status} {answer[:300]!r}")

    started = time.perf_counter()
    await asyncio.gather(*(worker(connection) for connection in connections))
    elapsed = time.perf_counter() - started
    for connection in connections:
        connection.close()
    return elapsed, failures
