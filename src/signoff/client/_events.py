"""One event stream per client: the push behind its waiters (DESIGN §6).

The first subscription starts a thread that holds `GET /v1/events` open and fires the client's
`WakeupHub` with the id of every request that changes, however many waiters there are. After a
disconnect it reconnects with `Last-Event-ID` (the server names the point reached as soon as a
stream opens, so there always is one after the first), the server replays what was missed, and
it backs off while the server cannot be reached (with several replicas, it resumes on the next);
the backoff starts over once a stream is established. Whenever a stream opens without a point to
resume from, every waiter is woken to look again, which covers changes made before the stream was
open; so is every waiter when the server refuses the stream (a revoked token, a disabled user),
and each gets that error itself.
This is the waiters' safety net: none of them polls.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading

import httpx

from ..errors import AccessError
from ..store.wakeup import WakeupHub
from ._retry import Backoff
from ._servers import Servers
from ._sse import SseDecoder
from ._wire import error_from

log = logging.getLogger("signoff.client")

READ_TIMEOUT_SECONDS = 60.0
"""The server sends a keepalive every 15 s; a silent minute means the connection is gone."""


class EventFollower:
    def __init__(self, servers: Servers, headers: dict[str, str], hub: WakeupHub) -> None:
        self.servers = servers
        self.hub = hub
        self.streams_opened = 0
        """How many times an event stream was opened (once, unless the connection dropped)."""
        self.last_event_id: str | None = None
        self.backoff = Backoff()
        """Delays between reconnections; starts over once a stream is established."""
        self._failing = False
        """Whether the attempts since the last stream opened have all failed."""
        self._headers = headers
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start following, once; later calls do nothing."""
        with self._lock:
            if self._thread is not None or self._closed:
                return
            self._thread = threading.Thread(target=self._run, name="signoff-client-events", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        with self._lock:
            self._closed = True
            thread, loop, task = self._thread, self._loop, self._task
        if loop is not None and task is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended
                loop.call_soon_threadsafe(task.cancel)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _run(self) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            asyncio.run(self._follow())

    async def _follow(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._loop = asyncio.get_running_loop()
            self._task = asyncio.current_task()
        timeout = httpx.Timeout(10.0, read=READ_TIMEOUT_SECONDS)
        async with httpx.AsyncClient(headers=self._headers, timeout=timeout) as http:
            while True:
                url = self.servers.current
                try:
                    await self._stream(http, url)
                except Exception as exc:  # unreachable, cut off, refused (a revoked token): retry, slower
                    (log.debug if self._failing else log.warning)(
                        "the event stream from %s failed (%s); reconnecting", url, repr(exc)
                    )
                    if isinstance(exc, AccessError):
                        if not self._failing:
                            self.hub.fire(self.hub.watched())  # they look, and get the refusal themselves
                    else:  # this replica is down or cut the stream: resume on the next
                        self.servers.failed(url)
                    self._failing = True
                await asyncio.sleep(self.backoff.next_delay())

    async def _stream(self, http: httpx.AsyncClient, url: str) -> None:
        """Follow one connection until it ends."""
        headers = {"Accept": "text/event-stream"}
        resume = self.last_event_id
        if resume is not None:
            headers["Last-Event-ID"] = resume
        async with http.stream("GET", url + "/v1/events", headers=headers) as response:
            if response.status_code != 200:
                raise error_from(response.status_code, await response.aread())
            decoder = SseDecoder()
            decoder.last_event_id = resume
            opened = False
            async for line in response.aiter_lines():
                if not opened:  # the server subscribes before its first line: from here on, nothing is missed
                    opened = True
                    self.streams_opened += 1
                    self.backoff.reset()
                    self._failing = False
                    if resume is None:
                        self.hub.fire(self.hub.watched())
                event = decoder.feed(line)
                if not line:  # a block ended: its id (even without data, as the server's first) is reached
                    self.last_event_id = decoder.last_event_id
                if event is None:
                    continue
                request_id = json.loads(event.data).get("request", {}).get("id")
                if isinstance(request_id, str):
                    self.hub.fire([request_id])
