"""The peers' side of a wake-up: how each makes a pending request, how its agent waits (its own
API, at its defaults), and a process of its own that decides, as a person's would.

- holdpoint 0.2.0 has no call that waits for a decision: its agent reads the action again
  (`hold.get`) every `poll_interval` (HoldPoint's default), as holdpoint waits for a racing
  approval itself. The decision: `hold.approve(id, actor=..., execute=False)` (the agent runs it).
- tollgate 1.4.0: `ApprovalStore.wait_for_decision`, which `AsyncQueueApprover` awaits; the SQLite
  store polls every `poll_interval` (its default), the Redis store waits on pub/sub. The decision:
  `store.set_decision(id, APPROVED, ...)`.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Literal

from cycles import EMAIL_ARGS
from wakeups import deciding_process

PeerKind = Literal["holdpoint", "tollgate-sqlite", "tollgate-redis"]
WAIT_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class PeerSpec:
    kind: PeerKind
    location: str
    """A SQLite file, or a Redis URL."""


def send_email(to: str, subject: str, body: str) -> str:
    return f"sent {subject} to {to}"


# -- holdpoint --------------------------------------------------------------------------------


def open_holdpoint(path: str) -> tuple[Any, Callable[..., Any]]:
    from holdpoint import HoldPoint, SQLiteStore

    hold = HoldPoint(store=SQLiteStore(path))
    return hold, hold.guard(kind="send_email")(send_email)


def holdpoint_poll_interval() -> float:
    from holdpoint import HoldPoint

    default: float = inspect.signature(HoldPoint).parameters["poll_interval"].default
    return default


# -- tollgate ---------------------------------------------------------------------------------


def open_tollgate(spec: PeerSpec) -> Any:
    if spec.kind == "tollgate-redis":
        from tollgate.backends.redis_store import RedisApprovalStore

        return RedisApprovalStore(redis_url=spec.location)
    from tollgate.backends import SQLiteApprovalStore

    return SQLiteApprovalStore(spec.location)


def tollgate_poll_interval() -> float:
    from tollgate.backends import SQLiteApprovalStore

    default: float = inspect.signature(SQLiteApprovalStore).parameters["poll_interval"].default
    return default


def tollgate_request() -> tuple[Any, Any, Any, str]:
    """What tollgate's tower hands its approver for a `send_email` call, and its hash."""
    from tollgate.approvals import compute_request_hash
    from tollgate.types import AgentContext, Effect, Intent, ToolRequest

    agent = AgentContext(agent_id="bench-agent", version="1", owner="bench")
    intent = Intent(action="send_email", reason="Send an email to bob@example.com")
    request = ToolRequest(
        tool="send_email", action="send", resource_type="email", effect=Effect.WRITE, params=dict(EMAIL_ARGS)
    )
    return agent, intent, request, compute_request_hash(agent, intent, request)


# -- the deciding process ---------------------------------------------------------------------


def decider_process(spec: PeerSpec, pipe: Connection) -> None:
    """Opens the peer's store, decides each (id, hash) it is sent; answers monotonic ns before and after."""
    loop = asyncio.new_event_loop()
    decide: Callable[[str, str], None]
    if spec.kind == "holdpoint":
        hold, _ = open_holdpoint(spec.location)

        def decide(request_id: str, _: str) -> None:
            hold.approve(request_id, actor="alice", execute=False)

    else:
        from tollgate.types import ApprovalOutcome

        store = open_tollgate(spec)

        def decide(request_id: str, request_hash: str) -> None:
            loop.run_until_complete(
                store.set_decision(request_id, ApprovalOutcome.APPROVED, "alice", time.time(), request_hash)
            )

    pipe.send("ready")
    while (message := pipe.recv()) is not None:
        request_id, request_hash = message
        called = time.monotonic_ns()
        decide(request_id, request_hash)
        pipe.send((called, time.monotonic_ns()))
    pipe.close()
    loop.close()


@contextmanager
def peer_decider(spec: PeerSpec) -> Iterator[Callable[[str, str], tuple[int, int]]]:
    """A deciding process; yields decide(id, hash) -> monotonic ns just before the decision was called
    and just after it returned."""
    with deciding_process(decider_process, (spec,), f"{spec.kind} decider") as decide:
        yield lambda request_id, request_hash: decide((request_id, request_hash))


# -- the waiting agent ------------------------------------------------------------------------


class LoopThread:
    """An event loop in a thread of its own, for the async peers' waiting agents."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="peer-loop", daemon=True)
        self.thread.start()

    def run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(WAIT_TIMEOUT_S + 5)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()
