"""Waiting for a decision: on a console in this process, blocking in a thread, or as a coroutine.

Waiters are woken by push (`Backend.subscribe`); they look again at most every `poll_interval`
seconds as a safety net, and at the deadline they expire the request themselves
(compare-and-set, so only one party does it).
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import TYPE_CHECKING

from ._util import utcnow
from .backend import Backend
from .errors import AlreadyDecided, InvalidDecision, NotAnApprover, RequestExpired, ReviewTimeout
from .requests import Request

if TYPE_CHECKING:
    from .console import ConfirmationUI


def present(store: Backend, ui: ConfirmationUI, request: Request, *, actor: str) -> Request:
    """Show the request on this process's UI until someone (here or elsewhere) decides."""
    stop = threading.Event()
    waiter = store.subscribe(request.id)

    def watch() -> None:
        while not stop.is_set():
            if utcnow() >= request.deadline:
                stop.set()
                return
            if waiter.wait(0.2):
                waiter.clear()
                if store.get_request(request.id).is_terminal:
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
                return store.decide(request.id, decision, actor=actor, channel=ui.channel)
            except InvalidDecision as exc:
                error = exc.message
            except NotAnApprover as exc:
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


def wait_blocking(
    store: Backend, request: Request, *, timeout: float | None, poll_interval: float
) -> Request:
    waiter = store.subscribe(request.id)
    give_up = None if timeout is None else time.monotonic() + timeout
    try:
        while True:
            waiter.clear()
            current = store.get_request(request.id)
            delay = next_wait(store, current, give_up, poll_interval)
            if delay is None:
                return current if current.is_terminal else store.get_request(request.id)
            waiter.wait(delay)
    finally:
        store.unsubscribe(waiter)


async def wait_async(
    store: Backend, request: Request, *, timeout: float | None, poll_interval: float
) -> Request:
    waiter = store.subscribe_async(request.id)
    give_up = None if timeout is None else time.monotonic() + timeout
    try:
        while True:
            waiter.clear()
            current = await asyncio.to_thread(store.get_request, request.id)
            delay = await asyncio.to_thread(next_wait, store, current, give_up, poll_interval)
            if delay is None:
                if current.is_terminal:
                    return current
                return await asyncio.to_thread(store.get_request, request.id)
            await waiter.wait_async(delay)
    finally:
        store.unsubscribe(waiter)


def next_wait(store: Backend, current: Request, give_up: float | None, poll_interval: float) -> float | None:
    """Seconds to sleep before looking again, or None when done waiting (terminal or expired)."""
    if current.is_terminal:
        return None
    until_deadline = (current.deadline - utcnow()).total_seconds()
    if until_deadline <= 0:
        store.expire(current.id)
        return None
    delay = min(until_deadline, poll_interval)
    if give_up is not None:
        remaining = give_up - time.monotonic()
        if remaining <= 0:
            raise ReviewTimeout(f"no decision on request {current.id} yet; it stays pending")
        delay = min(delay, remaining)
    return delay
