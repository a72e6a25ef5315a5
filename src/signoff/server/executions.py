"""Executions as people meet them: the ones in doubt, the abandoned approvals, and letting a call
run (again).

An execution is in doubt when its process stopped while running the tool (the sweeper marks it
once the lease has run out): the tool may or may not have taken effect, and nothing runs it
again by itself. A person looks where the tool acts, then either leaves it so (the agent's
replays are told it is in doubt) or lets it run again (`rerun_as`: the next replay runs the
tool). An abandoned one was approved, and the process waiting to run it stopped first: nothing
ran, a replay runs it, and `rerun_as` takes it off the list. The API and the inbox go through here.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import PermissionDenied
from ..identity import User
from ..requests import Execution, ExecutionStatus, Request
from ..store import Store
from .access import can_see, visible_request

SCAN_LIMIT = 500
"""At most this many executions are read to fill one page of those a user may see."""


@dataclass(frozen=True)
class ExecutionView:
    execution: Execution
    request: Request


def visible_executions(
    store: Store,
    user: User,
    *,
    status: ExecutionStatus = ExecutionStatus.IN_DOUBT,
    limit: int = 50,
    cursor: str | None = None,
) -> tuple[list[ExecutionView], str | None]:
    """The executions in `status` whose request `user` may see, newest request first, and the
    cursor of the next page (None at the end). A page may hold fewer than `limit` and still have
    a next one, when many of the executions read were not the user's to see."""
    found: list[ExecutionView] = []
    batch_size = min(max(limit * 2, 10), SCAN_LIMIT)
    scanned = 0
    while scanned < SCAN_LIMIT:
        batch = store.list_executions(status=status, limit=batch_size, cursor=cursor)
        scanned += len(batch)
        requests = store.get_requests([execution.request_id for execution in batch])
        last_batch = len(batch) < batch_size
        for index, execution in enumerate(batch):
            cursor = execution.request_id
            request = requests.get(execution.request_id)
            if request is not None and can_see(request, user):
                found.append(ExecutionView(execution, request))
                if len(found) == limit:
                    at_end = last_batch and index == len(batch) - 1
                    return found, None if at_end else cursor
        if last_batch:
            return found, None
    return found, cursor


def rerun_as(store: Store, request_id: str, user: User, *, channel: str) -> Execution:
    """A person lets an in-doubt, failed or abandoned call run (again): the next replay of the
    call runs the tool. 404 / 403 (audited) when the request is not theirs to see; 403 for agents (audited by
    the API's error handler); 409 when the execution is in another state."""
    visible_request(store, request_id, user, channel=channel)
    if user.is_agent:  # the API's error handler audits the refusal
        raise PermissionDenied("a person decides whether an in-doubt call may run again")
    return store.reset_execution(request_id, actor=user.name, channel=channel)
