"""Store writes from the event loop (the API's decisions and new requests), run in bursts that
share one commit.

Handing each write to a thread pool costs a thread switch and a wake-up of the event loop per
call, and 32 threads contending for the GIL and the write lock cost more than the writes
themselves. Here one thread takes whatever calls are queued, runs them one after another inside
`store.grouped()` (one commit for the burst) and settles their futures with one wake-up of the
loop per burst. No caller hears of its result before the commit that holds it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..store import Store

MAX_BURST = 64
"""At most this many calls share one commit."""


@dataclass(frozen=True, slots=True)
class _Call:
    fn: Callable[[], Any]
    future: asyncio.Future[Any]


@dataclass(frozen=True, slots=True)
class _Outcome:
    future: asyncio.Future[Any]
    value: Any = None
    error: BaseException | None = None


class GroupedWriter:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.bursts = 0
        """Bursts run so far (each one commit)."""
        self._queue: deque[_Call] = deque()
        self._ready = threading.Condition()
        self._stopped = False
        self._thread: threading.Thread | None = None

    async def run(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        """`fn(*args, **kwargs)` on the writer thread, answered once its burst has committed."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        with self._ready:
            if self._stopped:
                raise RuntimeError("the grouped writer is stopped")
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="signoff-writer", daemon=True)
                self._thread.start()
            self._queue.append(_Call(lambda: fn(*args, **kwargs), future))
            self._ready.notify()
        return await future

    def stop(self) -> None:
        """Finish what is queued, then end the thread."""
        with self._ready:
            self._stopped = True
            self._ready.notify()
        if self._thread is not None:
            self._thread.join(10)

    def _work(self) -> None:
        while True:
            with self._ready:
                while not self._queue and not self._stopped:
                    self._ready.wait()
                if not self._queue:
                    return
                burst = [self._queue.popleft() for _ in range(min(len(self._queue), MAX_BURST))]
            self._settle(self._run_burst(burst))

    def _run_burst(self, burst: list[_Call]) -> list[_Outcome]:
        outcomes: list[_Outcome] = []
        try:
            with self.store.grouped():
                for call in burst:
                    try:
                        outcomes.append(_Outcome(call.future, value=call.fn()))
                    except Exception as exc:
                        outcomes.append(_Outcome(call.future, error=exc))
        except Exception as exc:  # the commit failed: none of the burst's writes happened
            return [_Outcome(call.future, error=exc) for call in burst]
        finally:
            self.bursts += 1
        return outcomes

    @staticmethod
    def _settle(outcomes: list[_Outcome]) -> None:
        by_loop: dict[asyncio.AbstractEventLoop, list[_Outcome]] = {}
        for outcome in outcomes:
            by_loop.setdefault(outcome.future.get_loop(), []).append(outcome)
        for loop, settled in by_loop.items():
            with contextlib.suppress(RuntimeError):  # that loop has closed: nobody waits any more
                loop.call_soon_threadsafe(_set_all, settled)


def _set_all(outcomes: list[_Outcome]) -> None:
    for outcome in outcomes:
        if outcome.future.done():  # the caller gave up (a client that went away)
            continue
        if outcome.error is not None:
            outcome.future.set_exception(outcome.error)
        else:
            outcome.future.set_result(outcome.value)
