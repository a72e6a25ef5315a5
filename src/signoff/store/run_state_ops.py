"""A paused agent run's saved state, kept in the store because it holds the calls' arguments.

Frameworks that pause a run hand back a state to resume it from (the OpenAI Agents SDK's
`RunState.to_string()`). It holds the model's tool calls and their arguments, so signoff keeps
it server side, next to the requests it waits on: one record per (creator, thread_id), saved
again at each pause, read back by the process that resumes, and readable only by the user that
saved it (through a server, the agent's token: `created_by` is the token's user).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from .._util import utcnow
from ..requests import LOCAL_CREATOR
from .core import StoreCore


@dataclass(frozen=True, kw_only=True)
class RunStateRecord:
    """One thread's saved run state: `kind` says whose format `state` is (e.g. "openai-agents")."""

    thread_id: str
    kind: str
    state: str
    created_by: str
    created_at: datetime
    updated_at: datetime


class RunStates(Protocol):
    """What keeps run states: a local store (`RunStateOps`) or a `Client` of a server."""

    def save_run_state(
        self, thread_id: str, state: str, *, kind: str, created_by: str = LOCAL_CREATOR
    ) -> RunStateRecord: ...

    def load_run_state(self, thread_id: str, *, created_by: str = LOCAL_CREATOR) -> RunStateRecord | None: ...

    def delete_run_state(self, thread_id: str, *, created_by: str = LOCAL_CREATOR) -> bool: ...


class RunStateOps(StoreCore):
    def save_run_state(
        self, thread_id: str, state: str, *, kind: str, created_by: str = LOCAL_CREATOR
    ) -> RunStateRecord:
        """Keep `state` as `created_by`'s run state of `thread_id`, replacing the one kept before."""
        with self._transaction() as (tx, _):
            tx.run(
                "save_run_state",
                created_by=created_by,
                thread_id=thread_id,
                kind=kind,
                state=state,
                now=utcnow(),
            )
        record = self.load_run_state(thread_id, created_by=created_by)
        assert record is not None
        return record

    def load_run_state(self, thread_id: str, *, created_by: str = LOCAL_CREATOR) -> RunStateRecord | None:
        """`created_by`'s run state of `thread_id`, if one is kept."""
        with self._read() as tx:
            row = tx.one("load_run_state", created_by=created_by, thread_id=thread_id)
        return RunStateRecord(**row) if row is not None else None

    def delete_run_state(self, thread_id: str, *, created_by: str = LOCAL_CREATOR) -> bool:
        """Forget `created_by`'s run state of `thread_id` (the run finished); whether one was kept."""
        with self._transaction() as (tx, _):
            return tx.run("delete_run_state", created_by=created_by, thread_id=thread_id) == 1
