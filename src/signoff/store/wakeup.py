"""Waking waiters when a request changes (DESIGN §6).

Waiters subscribe to a request id and sleep on an event; nobody polls per waiter. The store fires
the hub after its own commits (in-process), and a backend source fires it for changes made by
other processes: PostgreSQL LISTEN/NOTIFY, or SQLite's `PRAGMA data_version` checked by one
thread per store when the kernel says the database's WAL was written (or at a short interval where
it cannot say). An async waiter is woken through its loop, so a thousand
waiting coroutines need no thread each.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import asyncio

    from ..requests import Request

ANY = "*"
"""Subscribe to this id to be woken by every change (the server's event feed does)."""
NOTED_LIMIT = 10_000
"""Past this many changed requests noted for one `ANY` waiter, it is told "everything" instead."""


class Changes:
    """What an `ANY` waiter was woken for since it last looked: the requests that changed, each
    with its creator when the source said (None: not said), or everything (a source that cannot
    say which, or that may have missed some)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: dict[str, str | None] = {}
        self._everything = False

    def note(self, request_ids: list[str], creators: Mapping[str, str]) -> None:
        with self._lock:
            if ANY in request_ids or len(self._requests) + len(request_ids) > NOTED_LIMIT:
                self._everything = True
                self._requests.clear()
            elif not self._everything:
                for request_id in request_ids:
                    self._requests[request_id] = creators.get(request_id) or self._requests.get(request_id)

    def take(self) -> tuple[bool, dict[str, str | None]]:
        """(everything, {request id: creator or None}) noted so far; noting starts over."""
        with self._lock:
            taken = self._everything, self._requests
            self._everything, self._requests = False, {}
        return taken


class Waiter:
    """One subscription to one request. `wait()` for threads, `wait_async()` for coroutines."""

    def __init__(self, request_id: str, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.request_id = request_id
        self._event = threading.Event()
        self._loop = loop
        self._async_event: asyncio.Event | None = None
        if loop is not None:  # asyncio is loaded already (the loop runs); a CLI command never loads it
            import asyncio

            self._async_event = asyncio.Event()
        self.changes = Changes() if request_id == ANY else None
        """For an `ANY` waiter: which requests changed."""
        self.ended: Request | None = None
        """The request as it ended, when the wake-up carried it (PostgreSQL's NOTIFY does): the
        waiter may resume on it without reading the request again."""

    def fire(self, ended: Request | None = None) -> None:
        if ended is not None:
            self.ended = ended
        self._event.set()
        if self._loop is not None and self._async_event is not None:
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
                self._loop.call_soon_threadsafe(self._async_event.set)

    def clear(self) -> None:
        self._event.clear()
        if self._async_event is not None:
            self._async_event.clear()

    def wait(self, timeout: float | None) -> bool:
        return self._event.wait(timeout)

    async def wait_async(self, timeout: float | None) -> bool:
        assert self._async_event is not None, "subscribe with a loop to wait asynchronously"
        if self._event.is_set():
            return True
        import asyncio

        try:
            await asyncio.wait_for(self._async_event.wait(), timeout)
        except TimeoutError:
            return self._event.is_set()
        return True


class WakeSource(Protocol):
    """A thread that fires the hub for other processes' changes, and may block outside it."""

    def stop_waiting(self) -> None:
        """The store closes: end any wait now and stop."""


class WakeupHub:
    """Who waits for which request. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: dict[str, set[Waiter]] = {}
        self._changed = threading.Condition(self._lock)
        self.sources: list[WakeSource] = []
        """The sources firing this hub (`attach`ed), told when the store closes."""

    def subscribe(self, request_id: str, *, loop: asyncio.AbstractEventLoop | None = None) -> Waiter:
        waiter = Waiter(request_id, loop)
        with self._lock:
            self._waiters.setdefault(request_id, set()).add(waiter)
            self._changed.notify_all()
        return waiter

    def unsubscribe(self, waiter: Waiter) -> None:
        with self._lock:
            waiters = self._waiters.get(waiter.request_id)
            if waiters is not None:
                waiters.discard(waiter)
                if not waiters:
                    del self._waiters[waiter.request_id]

    def fire(
        self,
        request_ids: Iterable[str],
        creators: Mapping[str, str] | None = None,
        ended: Request | None = None,
    ) -> None:
        """Wake the waiters of `request_ids` and every `ANY` waiter (`ANY` among the ids tells
        them anything may have changed). `creators` names some requests' creators, when known;
        `ended`, one request as a commit ended it (its own waiters resume on it, unread)."""
        ids = list(request_ids)
        if not ids:
            return
        with self._lock:
            targets = [waiter for rid in ids for waiter in self._waiters.get(rid, ())]
            if ANY not in ids:
                targets.extend(self._waiters.get(ANY, ()))
        for waiter in targets:
            if waiter.changes is not None:
                waiter.changes.note(ids, creators or {})
            waiter.fire(ended if ended is not None and ended.id == waiter.request_id else None)

    def watched(self) -> list[str]:
        with self._lock:
            return list(self._waiters)

    def watches_requests(self) -> bool:
        """Whether anybody waits for a particular request (not only for every change)."""
        with self._lock:
            return len(self._waiters) > (ANY in self._waiters)

    def wait_for_watchers(self, timeout: float) -> bool:
        """Block until somebody subscribes (or the timeout passes); True if anyone is waiting."""
        with self._lock:
            if not self._waiters:
                self._changed.wait(timeout)
            return bool(self._waiters)

    def pause(self, timeout: float) -> None:
        """Sleep `timeout` seconds, or less if somebody subscribes meanwhile."""
        with self._lock:
            self._changed.wait(timeout)

    def attach(self, source: WakeSource) -> None:
        with self._lock:
            self.sources.append(source)

    def wake_sources(self) -> None:
        """The store closes: every source stops waiting (in `pause`, `wait_for_watchers` or its own)."""
        with self._lock:
            self._changed.notify_all()
            sources = list(self.sources)
        for source in sources:
            source.stop_waiting()
