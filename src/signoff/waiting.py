"""Waiting for a decision: on a console in this process, blocking in a thread, or as a coroutine.

Waiters are woken by push (`Backend.subscribe`): idle, a waiter costs nothing. The safety net
is per process, not per waiter: the backend's one source of wake-ups looks for changes it
might have missed (SQLite: the audit log since its last look; PostgreSQL: a slow poll of the
watched requests and a wake-up of all of them after its LISTEN connection comes back; a
`Client`: the event stream resumes from its last event, and a fresh stream wakes every waiter
once). With `poll_interval`, each waiter also looks again that often. At the deadline a waiter
expires the request itself (compare-and-set, so only one party does it).

While waiting, a gate's calls ride out transient trouble of the server behind a `Client`
until the request's deadline (`patience`).
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ._util import utcnow
from .backend import Backend
from .errors import (
    AlreadyDecided,
    InvalidDecision,
    NotAnApprover,
    PermissionDenied,
    RequestExpired,
    ReviewTimeout,
)
from .requests import Request

if TYPE_CHECKING:
    from .console import ConfirmationUI


T = TypeVar("T")
_patience: contextvars.ContextVar[datetime | None] = contextvars.ContextVar("signoff_patience", default=None)


@contextmanager
def patience(until: datetime | None) -> Iterator[None]:
    """Calls made inside (and in threads started with `asyncio.to_thread`) ride out transient
    trouble of the server behind a `Client` (connection errors, timeouts, 502, 503, 504) until
    `until`; then they raise `ServerUnavailable`. None: the client's own `retry_for`."""
    token = _patience.set(until)
    try:
        yield
    finally:
        _patience.reset(token)


def narrow_patience(until: datetime) -> None:
    """Inside `patience(...)`: from now on, ride out trouble until `until` at the latest (the
    enclosing `patience` restores what was before it when it ends). Outside: nothing."""
    current = _patience.get()
    if current is not None and until < current:
        _patience.set(until)


def current_patience() -> datetime | None:
    """Until when calls made now may ride out server trouble (None: not set)."""
    return _patience.get()


PAST_DEADLINE = timedelta(seconds=30)
"""How long after a request's deadline the gate's calls still ride out server trouble, so that
the expiry itself can be recorded."""


def give_up_at(timeout: float | None) -> float | None:
    """When (on the monotonic clock) a caller's `timeout` runs out; None: never."""
    return None if timeout is None else time.monotonic() + timeout


def patience_until(deadline: datetime, give_up: float | None) -> datetime:
    """Until when the gate's calls ride out server trouble: a little past the request's deadline
    (its expiry must be recorded too), and never past the caller's timeout."""
    until = deadline + PAST_DEADLINE
    if give_up is not None:
        until = min(until, utcnow() + timedelta(seconds=max(give_up - time.monotonic(), 0.0)))
    return until


def present(store: Backend, ui: ConfirmationUI, request: Request, *, actor: str) -> Request:
    """Show the request on this process's UI until someone (here or elsewhere) decides."""
    stop = threading.Event()
    waiter = store.subscribe(request.id)

    def watch() -> None:  # subscribed before its first read: a decision made meanwhile wakes it
        while not stop.is_set():
            waiter.clear()
            if store.get_request(request.id).is_terminal:
                stop.set()
                return
            while not waiter.wait(0.2):
                if stop.is_set() or utcnow() >= request.deadline:
                    stop.set()
                    return

    watcher = threading.Thread(target=watch, name="signoff-ui-watch", daemon=True)
    watcher.start()
    error: str | None = None
    try:
        while not stop.is_set():
            decision = ui.get_decision(request, stop=stop, error=error)
            if decision is None:
                break
            try:
                return store.decide_as_person(request.id, decision, actor=actor, channel=ui.channel)
            except InvalidDecision as exc:
                error = exc.message
            except (NotAnApprover, PermissionDenied) as exc:
                ui.show_message(f"{exc.message}; waiting for an approver to decide elsewhere.")
                break
            except (AlreadyDecided, RequestExpired):
                break
    finally:
        stop.set()
        watcher.join()
        store.unsubscribe(waiter)
    current = store.get_request(request.id)
    if current.is_terminal:
        ui.show_decided(current)
    return current


class Run(Protocol):
    """How a coroutine runs a blocking store call: `asyncio.to_thread`, or a server's own threads."""

    def __call__(self, fn: Callable[..., T], /, *args: Any) -> Awaitable[T]: ...


def watch_blocking(
    store: Backend, request_id: str, *, give_up: float | None, poll_interval: float | None = None
) -> Request:
    """The request once it has ended (decided, expired at its deadline, cancelled), or as it is
    when `give_up` (on the monotonic clock) has passed. Every waiter goes this way: subscribed
    before its first read, its wake-up cleared before each read, so a change committed at any
    moment, even between a read and the sleep after it, wakes it. A wake-up that carried the
    request as a commit ended it (`Waiter.ended`) stands for that read."""
    waiter = store.subscribe(request_id)
    try:
        while True:
            ended, waiter.ended = waiter.ended, None
            waiter.clear()
            current = ended if ended is not None else store.get_request(request_id)
            delay = next_wait(store, current, give_up, poll_interval)
            if delay is None:
                return current if current.is_terminal else store.get_request(request_id)
            waiter.wait(delay)
    finally:
        store.unsubscribe(waiter)


async def watch_async(
    store: Backend,
    request_id: str,
    *,
    give_up: float | None,
    poll_interval: float | None = None,
    run: Run = asyncio.to_thread,
) -> Request:
    """`watch_blocking` as a coroutine: waiting holds no thread (`run` runs the store's calls)."""
    waiter = store.subscribe_async(request_id)
    try:
        while True:
            ended, waiter.ended = waiter.ended, None
            waiter.clear()
            current = ended if ended is not None else await run(store.get_request, request_id)
            if current.is_terminal:
                return current
            delay = await run(next_wait, store, current, give_up, poll_interval)
            if delay is None:
                return await run(store.get_request, request_id)
            await waiter.wait_async(delay)
    finally:
        store.unsubscribe(waiter)


def wait_blocking(
    store: Backend, request: Request, *, timeout: float | None, poll_interval: float | None = None
) -> Request:
    """The request once it has ended; ReviewTimeout if `timeout` passes first."""
    current = watch_blocking(store, request.id, give_up=give_up_at(timeout), poll_interval=poll_interval)
    return _ended(current)


async def wait_async(
    store: Backend, request: Request, *, timeout: float | None, poll_interval: float | None = None
) -> Request:
    """`wait_blocking` as a coroutine."""
    current = await watch_async(store, request.id, give_up=give_up_at(timeout), poll_interval=poll_interval)
    return _ended(current)


def _ended(current: Request) -> Request:
    if not current.is_terminal:
        raise ReviewTimeout(f"no decision on request {current.id} yet; it stays pending")
    return current


def next_wait(
    store: Backend, current: Request, give_up: float | None, poll_interval: float | None
) -> float | None:
    """Seconds to sleep before looking again unless woken, or None when done waiting: the
    request has ended, it is past its deadline (then it is expired here), or `give_up` passed."""
    if current.is_terminal:
        return None
    until_deadline = (current.deadline - utcnow()).total_seconds()
    if until_deadline <= 0:
        store.expire(current.id)
        return None
    delay = until_deadline if poll_interval is None else min(until_deadline, poll_interval)
    if give_up is not None:
        remaining = give_up - time.monotonic()
        if remaining <= 0:
            return None
        delay = min(delay, remaining)
    return delay
