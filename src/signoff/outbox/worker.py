"""The delivery worker: sends the outbox's rows, inside `signoff serve` (DESIGN §9).

It claims due rows (with a lease: see `store.outbox_ops`), and sends each in its channel's own
lane: a lane has its own concurrency, every call its own timeout, and holds a bounded number of
claimed rows, so a platform that fails or hangs delays only its own rows, never another
channel's or any decision (the rows were committed with the decision; sending is after).
A failed attempt is retried with exponential backoff and jitter (`RetryPolicy`), and past its
time dead-lettered; every attempt lands in the request's delivery log and in one structured log
line (thread, request, handle, platform, result).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

from .._util import utcnow
from ..channels.registry import ChannelRegistry
from ..destinations import Destinations
from ..errors import SignoffError
from ..requests import Request
from ..store import Store
from ..store.outbox_ops import OutboxRow, Outcome, lane_of
from ..store.wakeup import ANY, Waiter
from .attempts import Attempts, Postponed
from .settings import OutboxSettings

log = logging.getLogger("signoff.outbox")
STOP_GRACE = 2.0
"""Seconds a stopping worker lets the deliveries under way finish before it gives them back."""
RECORD_BURST = 500
"""The most finished attempts written in one transaction."""
GATHER_SECONDS = 0.005
"""After a look at the outbox, let changes gather this long: a burst of commits costs one look
(a look per commit cost the API's event loop a thread hand-off and a read per decision)."""


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class DeliveryWorker:
    def __init__(
        self,
        store: Store,
        channels: ChannelRegistry,
        settings: OutboxSettings | None = None,
        *,
        base_url: str = "http://127.0.0.1:8765",
        name: str | None = None,
        destinations: Destinations | None = None,
        follow: Callable[[], object] | None = None,
    ) -> None:
        """`follow`: brings `channels` up to the store's before each claim (a channel disabled
        before a claim sends none of the rows claimed; see `channels.following`)."""
        self.store = store
        self.channels = channels
        self._follow = follow
        self.settings = settings or OutboxSettings()
        self.base_url = base_url.rstrip("/")
        self.name = name or worker_name()
        self._lanes: dict[str, asyncio.Semaphore] = {}
        self._held: Counter[str] = Counter()
        self._tasks: set[asyncio.Task[None]] = set()
        self._claiming = 0
        """Claims under way (their rows leased, their tasks not yet started): `drain` waits for them."""
        self._rows: dict[asyncio.Task[None], OutboxRow] = {}
        """The row each task is sending (given back if the worker stops first)."""
        self._runner: asyncio.Task[None] | None = None
        self._recorder: asyncio.Task[None] | None = None
        self._finished: asyncio.Queue[tuple[OutboxRow, Outcome, asyncio.Future[bool]]] = asyncio.Queue()
        self._attempts = Attempts(
            store,
            channels,
            self.settings,
            base_url=self.base_url,
            destinations=destinations or Destinations(),
        )
        self._room = asyncio.Event()
        self.sent = 0
        """Rows delivered by this worker (for benchmarks and tests)."""

    # -- running -------------------------------------------------------------------------------

    async def start(self) -> None:
        self._finished = asyncio.Queue()
        self._room = asyncio.Event()
        self._recorder = asyncio.create_task(self._record(), name="signoff-outbox-recorder")
        self._runner = asyncio.create_task(self._run(), name="signoff-outbox")

    async def stop(self) -> None:
        if self._runner is not None:
            self._runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._runner
        if self._tasks:  # what is under way may finish (and be recorded) for a moment
            await asyncio.wait(set(self._tasks), timeout=STOP_GRACE)
        unfinished = list(self._rows.values())
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if unfinished:  # given back now, rather than when their lease runs out
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self.store.postpone_outboxes, unfinished, self.name, until=utcnow())
        if self._recorder is not None:
            self._recorder.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._recorder
        await self._attempts.poster.close()

    async def _run(self) -> None:
        # Woken by this process's commits only (straight from the hub): other processes' rows
        # come at the next poll, so this waiter starts no watcher of their changes (on SQLite
        # it would read the log after every commit this process makes).
        waiter = self.store.hub.subscribe(ANY, loop=asyncio.get_running_loop())
        trouble: str | None = None
        try:
            while True:
                waiter.clear()
                try:
                    claimed = await self.dispatch_due()
                except SignoffError as exc:
                    if exc.message != trouble:
                        log.warning("the outbox cannot use the store (%s); trying again", exc.message)
                        trouble = exc.message
                    claimed = 0
                except Exception:
                    log.exception("the outbox worker failed; trying again")
                    claimed = 0
                else:
                    trouble = None
                if claimed == 0 or len(self._tasks) >= self.settings.batch:
                    await asyncio.sleep(GATHER_SECONDS)
                    await self._idle(waiter)
        finally:
            self.store.unsubscribe(waiter)

    async def _idle(self, waiter: Waiter) -> None:
        """Wait for a change in the store, a lane with room again, or the poll interval."""
        changed = asyncio.create_task(waiter.wait_async(self.settings.poll))
        room = asyncio.create_task(self._room.wait())
        try:
            await asyncio.wait({changed, room}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (changed, room):
                task.cancel()
            self._room.clear()

    async def dispatch_due(self) -> int:
        """Claim what is due (room permitting) and start sending it; how many rows were claimed.
        A lane holds at most its bound (`queue_factor` × its concurrency): full lanes are not
        claimed for, and rows past a lane's bound go back to the table at once."""
        self._claiming += 1
        try:
            return await self._claim_and_start()
        finally:
            self._claiming -= 1

    async def _claim_and_start(self) -> int:
        room = self.settings.batch - len(self._tasks)
        if room <= 0 or not await asyncio.to_thread(self.store.outbox_due):
            return 0
        if self._follow is not None:
            await asyncio.to_thread(self._follow)
        full = tuple(lane for lane, held in self._held.items() if held >= self._bound(lane))
        rows = await asyncio.to_thread(
            self.store.claim_outbox,
            self.name,
            lease=self.settings.lease,
            limit=room,
            per_lane=self.settings.webhook_concurrency * self.settings.queue_factor,
            full=full,
        )
        surplus = []
        about = list({row.request_id for row in rows if row.request_id is not None})
        requests = await asyncio.to_thread(self.store.get_requests, about)
        for row in rows:
            lane = lane_of(row)
            if self._held[lane] >= self._bound(lane):
                surplus.append(row)
                continue
            self._held[lane] += 1
            task = asyncio.create_task(
                self._deliver(row, lane, requests.get(row.request_id or "")), name=f"signoff-outbox-{row.id}"
            )
            self._tasks.add(task)
            self._rows[task] = row
            task.add_done_callback(self._done)
        if surplus:
            await asyncio.to_thread(
                self.store.postpone_outboxes, surplus, self.name, until=utcnow() + self.settings.postpone
            )
        return len(rows) - len(surplus)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._rows.pop(task, None)

    def _bound(self, lane: str) -> int:
        return self._concurrency(lane) * self.settings.queue_factor

    def _concurrency(self, lane: str) -> int:
        if lane.startswith("webhook:"):
            return self.settings.webhook_concurrency
        channel = self.channels.get(lane.removeprefix("channel:"))
        return channel.concurrency if channel is not None else 1

    async def drain(self, timeout: float = 10.0) -> None:
        """Send everything due now and wait for it (tests, `signoff channels test`)."""
        give_up = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < give_up:
            claimed = await self.dispatch_due()
            if self._tasks:
                await asyncio.wait(
                    set(self._tasks), timeout=max(0.0, give_up - asyncio.get_running_loop().time())
                )
            elif claimed == 0 and self._claiming == 0:
                return
            elif claimed == 0:  # the worker's own loop is claiming: its tasks start in a moment
                await asyncio.sleep(0.01)

    # -- one row -------------------------------------------------------------------------------

    async def _deliver(self, row: OutboxRow, lane: str, request: Request | None) -> None:
        try:
            semaphore = self._lanes.setdefault(lane, asyncio.Semaphore(self._concurrency(lane)))
            async with semaphore:
                context: dict[str, Any] = {}
                try:
                    outcome = await self._attempts.attempt(row, context, request)
                except Postponed:
                    await self._postpone(row)
                    return
        finally:
            self._held[lane] -= 1
            if self._held[lane] == self._bound(lane) // 2:  # half empty: claim more for it
                self._room.set()
        done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._finished.put_nowait((row, outcome, done))
        recorded = await done
        if outcome.state == "sent":
            self.sent += 1
        self._attempts.log(row, outcome, context, recorded)

    async def _record(self) -> None:
        """Write finished attempts in bursts: whatever has finished meanwhile shares one
        transaction (one commit), so a fast receiver is not held to one fsync per delivery."""
        while True:
            burst = [await self._finished.get()]
            while not self._finished.empty() and len(burst) < RECORD_BURST:
                burst.append(self._finished.get_nowait())
            try:
                recorded = await asyncio.to_thread(
                    self.store.finish_outbox_many, [(row, outcome) for row, outcome, _ in burst], self.name
                )
            except Exception as exc:  # the rows stay claimed; their lease runs out and they are tried again
                log.warning("could not record %d delivery attempt(s): %s", len(burst), exc)
                recorded = [False] * len(burst)
            for (_, _, done), ok in zip(burst, recorded, strict=True):
                if not done.done():
                    done.set_result(ok)

    async def _postpone(self, row: OutboxRow) -> None:
        await asyncio.to_thread(
            self.store.postpone_outbox, row, self.name, until=utcnow() + self.settings.postpone
        )


__all__ = ["DeliveryWorker", "OutboxSettings", "Postponed"]
