"""Test helpers: a person who decides from another thread once a request shows up."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from signoff import Decision, Request, Store


def wait_for_pending(store: Store, *, timeout: float = 10.0, tool: str | None = None) -> Request:
    give_up = time.monotonic() + timeout
    while time.monotonic() < give_up:
        found = store.list_requests(status="pending", tool=tool, limit=1)
        if found:
            return found[0]
        time.sleep(0.005)
    raise AssertionError("no pending request appeared")


@contextmanager
def person_deciding(
    store: Store, decision: Decision, *, actor: str = "alice", tool: str | None = None
) -> Iterator[list[Request]]:
    """While the block runs, a thread decides the first pending request. Yields what it decided."""
    decided: list[Request] = []
    errors: list[BaseException] = []

    def decide() -> None:
        try:
            request = wait_for_pending(store, tool=tool)
            decided.append(store.decide(request.id, decision, actor=actor, channel="test"))
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    thread = threading.Thread(target=decide, daemon=True)
    thread.start()
    yield decided
    thread.join(timeout=15)
    if errors:
        raise errors[0]


def decided_digest(store: Store, request_id: str) -> str:
    """The args digest an execution claim of the request must carry: that of its decided args."""
    from signoff.execution import args_digest, decided_args

    return args_digest(decided_args(store.get_request(request_id)))
