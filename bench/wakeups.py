"""A waiter parked in `gate.review`, woken by a decision made elsewhere: the deciders (this
thread, another process) and one timed wake-up."""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Literal

from cycles import EMAIL_ARGS
from signoff import Approve, Gate, Outcome, Pending, RuleSet, Scope, ToolCall
from signoff.store import SQLiteStore, Store

ASK_RULES = RuleSet.from_dict({"tools": {"send_email": {"requires_approval": True}}})
SUBSCRIBE_TIMEOUT = 10.0
RESUME_TIMEOUT = 30.0


@dataclass(frozen=True)
class WakeSample:
    decide_called_ns: int
    decide_returned_ns: int
    resumed_ns: int

    @property
    def wakeup_ms(self) -> float:
        return (self.resumed_ns - self.decide_returned_ns) / 1e6

    @property
    def decide_ms(self) -> float:
        return (self.decide_returned_ns - self.decide_called_ns) / 1e6

    @property
    def total_ms(self) -> float:
        return (self.resumed_ns - self.decide_called_ns) / 1e6


Decider = Callable[[str], tuple[int, int]]
"""Decides a request (approve); returns monotonic ns just before the call and just after it returned."""


@dataclass(frozen=True)
class StoreSpec:
    """How another process opens the same store: a SQLite file, or a PostgreSQL DSN and schema."""

    backend: Literal["sqlite", "postgres"]
    location: str
    schema: str | None = None

    @property
    def described(self) -> str:
        return "SQLite" if self.backend == "sqlite" else "PostgreSQL"

    def open(self) -> Store:
        if self.backend == "sqlite":
            return SQLiteStore(self.location)
        from signoff.store.postgres import PostgresStore

        return PostgresStore(self.location, schema=self.schema, max_size=2, migrate=False)


def decide_now(store: Store, request_id: str) -> tuple[int, int]:
    called = time.monotonic_ns()
    store.decide(request_id, Approve(), actor="alice", channel="bench")
    return called, time.monotonic_ns()


def decider_process(spec: StoreSpec, pipe: Connection) -> None:
    """The other process: opens the same store, decides each request id it is sent."""
    store = spec.open()
    try:
        pipe.send("ready")
        while (request_id := pipe.recv()) is not None:
            pipe.send(decide_now(store, request_id))
    finally:
        store.close()
        pipe.close()


@contextmanager
def deciding_process(
    target: Callable[..., None], args: tuple[Any, ...], name: str
) -> Iterator[Callable[[Any], tuple[int, int]]]:
    """`target(*args, pipe)` in a process of its own, which sends "ready", then answers each message
    with the monotonic ns before and after its decision (None stops it); yields decide(message)."""
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    process = context.Process(target=target, args=(*args, theirs), name=name, daemon=True)
    process.start()
    theirs.close()
    if not ours.poll(60) or ours.recv() != "ready":
        process.kill()
        raise RuntimeError(f"the {name} process did not start")

    def decide(message: Any) -> tuple[int, int]:
        ours.send(message)
        if not ours.poll(RESUME_TIMEOUT):
            raise RuntimeError(f"the {name} process did not decide {message}")
        called, returned = ours.recv()
        return int(called), int(returned)

    try:
        yield decide
    finally:
        ours.send(None)
        process.join(10)
        if process.is_alive():
            process.kill()
        ours.close()


@contextmanager
def decider_in_other_process(spec: StoreSpec) -> Iterator[Decider]:
    with deciding_process(decider_process, (spec,), "bench-decider") as decide:
        yield decide


def wait_until_watched(store: Store, request_id: str) -> None:
    give_up = time.monotonic() + SUBSCRIBE_TIMEOUT
    while request_id not in store.hub.watched():
        if time.monotonic() > give_up:
            raise RuntimeError(f"the waiter never subscribed to {request_id}")
        time.sleep(0.0002)


def one_wakeup(gate: Gate, scope: Scope, index: int, decide: Decider, settle: float) -> WakeSample:
    """Submit a call, park a waiter in review(), decide once it is subscribed, time the resume."""
    call = ToolCall(name="send_email", args=EMAIL_ARGS, id=f"wake-{index}")
    pending = gate.submit(call, scope)
    if not isinstance(pending, Pending):
        raise RuntimeError(f"send_email should have needed approval, got {pending}")
    resumed: list[tuple[int, Outcome]] = []

    def wait() -> None:
        outcome = gate.review(call, scope, timeout=RESUME_TIMEOUT)
        resumed.append((time.monotonic_ns(), outcome))

    waiter = threading.Thread(target=wait, name="bench-waiter", daemon=True)
    waiter.start()
    wait_until_watched(gate.store, pending.request_id)
    time.sleep(settle)
    called, returned = decide(pending.request_id)
    waiter.join(RESUME_TIMEOUT)
    if not resumed:
        raise RuntimeError(f"the waiter did not resume after request {pending.request_id} was decided")
    resumed_ns, outcome = resumed[0]
    if not outcome.execute:
        raise RuntimeError(f"request {pending.request_id} should have been approved, got {outcome.status}")
    return WakeSample(called, returned, resumed_ns)
