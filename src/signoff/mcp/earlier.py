"""What an earlier proxy left in a thread the operator named (`--thread`): the keys of a call
that it used, and the calls among them that did not finish, for the client's retry to take over.

A call did not finish when its request is still open, or approved and not run to an end (its
execution not started, abandoned, running when its proxy stopped, or in doubt). One that got its
answer (the tool's result or error, a rejection, an answer, expiry) is done: the same arguments
again are a new call. Only the proxy's own agent's requests are taken over.

The store is asked key by key (`<stem>:0`, `:1`, ... until one is free), once per kind of call a
process sees: the calls of one kind are few, and each look-up is the unique key's index.
"""

from __future__ import annotations

import anyio

from ..backend import Backend
from ..requests import ExecutionStatus, Request, RequestStatus

UNFINISHED_RUNS = frozenset(
    {
        ExecutionStatus.NOT_STARTED,
        ExecutionStatus.ABANDONED,
        ExecutionStatus.RUNNING,
        ExecutionStatus.IN_DOUBT,
    }
)


async def earlier_calls(
    store: Backend, thread_id: str, agent: str | None, stem: str
) -> tuple[int, list[int]]:
    """(how many keys of `stem` are taken in `thread_id`, the unfinished calls of `agent` among them)."""

    def look() -> tuple[int, list[int]]:
        unfinished: list[int] = []
        n = 0
        while (request := store.find_request(thread_id, f"{stem}:{n}")) is not None:
            if request.agent == agent and not _finished(store, request):
                unfinished.append(n)
            n += 1
        return n, unfinished

    return await anyio.to_thread.run_sync(look)


def _finished(store: Backend, request: Request) -> bool:
    if not request.is_terminal:
        return False
    runs = request.status in (RequestStatus.APPROVED, RequestStatus.EDITED) or (
        request.status is RequestStatus.EXPIRED and request.rule.on_expire == "approve"
    )
    if not runs:
        return True
    execution = store.get_execution(request.id)
    return execution is not None and execution.status not in UNFINISHED_RUNS
