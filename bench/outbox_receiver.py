"""A minimal HTTP/1.1 receiver for the outbox benchmark, in its own process: answers every POST
with 204 (or, with --hang, never), keeps the set of `webhook-id`s it accepted, and tells how
many on `GET /count` as `{"accepted": N, "unique": M}`.

    python bench/outbox_receiver.py PORT [--hang]
"""

from __future__ import annotations

import asyncio
import json
import sys

SEEN: set[str] = set()
ACCEPTED = 0


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, hang: bool) -> None:
    global ACCEPTED
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method = lines[0].split(" ", 1)[0]
            headers = {}
            for line in lines[1:]:
                if ":" in line:
                    key, value = line.split(":", 1)
                    headers[key.strip().lower()] = value.strip()
            length = int(headers.get("content-length", "0"))
            if length:
                await reader.readexactly(length)
            if method == "GET":
                body = json.dumps({"accepted": ACCEPTED, "unique": len(SEEN)}).encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
                    % (len(body), body)
                )
            else:
                if hang:
                    await asyncio.sleep(3600)
                ACCEPTED += 1
                SEEN.add(headers.get("webhook-id", ""))
                writer.write(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n")
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main() -> None:
    port = int(sys.argv[1])
    hang = "--hang" in sys.argv
    server = await asyncio.start_server(lambda r, w: handle(r, w, hang), "127.0.0.1", port, backlog=1024)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
