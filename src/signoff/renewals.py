"""Renewing the leases of the calls running in this process: one thread per store (or client),
started when a run begins waiting (`renewing_for`) and kept while runs wait or run, so that a
tool starts without waiting for a thread of its own to be scheduled (on a busy machine that
wait cost milliseconds between the claim's commit and the tool). A renewal that fails is tried
again at the next beat; a store's renewals go one after another, so one held up by a server's
trouble delays only that store's."""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta

from ._util import utcnow
from .backend import Backend
from .errors import SignoffError
from .waiting import patience

log = logging.getLogger("signoff")

IDLE_EXIT = 30.0
"""A renewing thread with nothing to renew for this many seconds ends (the next run starts one)."""
MIN_INTERVAL = 0.05
IDLE_TICK = 1.0
"""An idle renewing thread looks this often, so that a claim renewed less often needs no wake-up
(waking it costs the claiming thread a hand-off of the interpreter before its tool starts)."""


@dataclass(eq=False)
class _Held:
    request_id: str
    token: str
    lease: timedelta
    interval: float
    next_at: float
    renewing: bool = False
    released: bool = False


@dataclass(eq=False)
class _Renewer:
    """The claims of one store and the thread renewing them."""

    store: Callable[[], Backend | None]
    pid: int = field(default_factory=os.getpid)
    """The process whose thread renews (a forked child starts its own)."""
    lock: threading.Condition = field(default_factory=threading.Condition)
    held: list[_Held] = field(default_factory=list)
    running: bool = False
    expecting: int = 0
    """Runs that will claim soon (`renewing_for`): the thread waits for them instead of ending."""
    wake_at: float = float("inf")
    """When the thread looks next (on the monotonic clock): a claim due later needs no wake-up."""

    def expect(self, runs: int) -> None:
        with self.lock:
            self.expecting += runs
            self._start()

    def _start(self) -> None:
        if not self.running:
            self.running = True
            threading.Thread(target=self._beat, name="signoff-lease", daemon=True).start()

    def hold(self, request_id: str, token: str, lease: timedelta) -> _Held:
        interval = max(lease.total_seconds() / 3, MIN_INTERVAL)
        held = _Held(request_id, token, lease, interval, time.monotonic() + interval)
        with self.lock:
            self.held.append(held)
            if not self.running:
                self._start()
            elif held.next_at < self.wake_at:
                self.lock.notify()
        return held

    def release(self, held: _Held) -> None:
        """Stop renewing `held`; once this returns, no renewal of it is under way."""
        with self.lock:
            held.released = True
            self.held.remove(held)
            while held.renewing:
                self.lock.wait()

    def _beat(self) -> None:
        idle_since: float | None = None
        with self.lock:
            while True:
                now = time.monotonic()
                if not self.held and self.expecting > 0:
                    idle_since = None
                    self._sleep(IDLE_TICK)
                    continue
                if not self.held:
                    idle_since = idle_since or now
                    if now - idle_since >= IDLE_EXIT:
                        self.running = False
                        return
                    self._sleep(min(IDLE_TICK, IDLE_EXIT - (now - idle_since)))
                    continue
                idle_since = None
                due = [held for held in self.held if held.next_at <= now]
                if not due:
                    self._sleep(min(held.next_at for held in self.held) - now)
                    continue
                for held in due:
                    held.next_at = now + held.interval
                    held.renewing = True
                self.lock.release()
                try:
                    for held in due:
                        self._renew(held)
                finally:
                    self.lock.acquire()
                    for held in due:
                        held.renewing = False
                    self.lock.notify_all()

    def _sleep(self, seconds: float) -> None:
        self.wake_at = time.monotonic() + seconds
        self.lock.wait(seconds)
        self.wake_at = float("inf")

    def _renew(self, held: _Held) -> None:
        store = self.store()
        if store is None or held.released:
            return
        try:
            with patience(utcnow() + held.lease):
                store.renew_lease(held.request_id, held.token, lease=held.lease)
        except SignoffError as exc:
            log.warning("could not renew the lease of request %s's execution: %s", held.request_id, exc)


_renewers: weakref.WeakKeyDictionary[Backend, _Renewer] = weakref.WeakKeyDictionary()
_renewers_lock = threading.Lock()


@contextmanager
def heartbeat(store: Backend, request_id: str, token: str, lease: timedelta) -> Iterator[None]:
    """Renew the claim's lease (every third of it) while the block runs, so other hosts don't
    think we died."""
    renewer = _renewer(store)
    held = renewer.hold(request_id, token, lease)
    try:
        yield
    finally:
        renewer.release(held)


@contextmanager
def renewing_for(store: Backend) -> Iterator[None]:
    """A call that will be claimed and run in this block (`gate.run` waiting for its decision):
    the store's renewing thread is started now, not between the claim and the tool."""
    renewer = _renewer(store)
    renewer.expect(1)
    try:
        yield
    finally:
        renewer.expect(-1)


def _renewer(store: Backend) -> _Renewer:
    with _renewers_lock:
        try:
            renewer = _renewers.get(store)
        except TypeError:  # a store that cannot be weakly referenced: renewed on its own
            return _Renewer(lambda: store)
        if renewer is None or renewer.pid != os.getpid():
            renewer = _renewers[store] = _Renewer(weakref.ref(store))
        return renewer
