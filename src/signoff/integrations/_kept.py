"""A run's state kept in signoff's store while it waits for people, so another process resumes it.

An adapter's durable mode stops the run and hands it back (or keeps it, as the Agents SDK adapter
keeps its `RunState`); its waiting mode waits inside the run. A process that dies while waiting
would lose the run, so each adapter keeps the same state its durable mode keeps (the Agents SDK's
`RunState`, Pydantic AI's messages, Haystack's paused history) before it starts to wait, and its
resume function reads it back. One record per (creator, thread), of one adapter's `kind` (see
`signoff.store.run_state_ops`), readable only by the user that saved it.

Keeping it does not make the run's calls safe to run again: signoff's execution record does
(a call that ran, or is `running`/`in_doubt`, is never run again), so resuming a kept state twice
runs nothing twice.
"""

from __future__ import annotations

import asyncio
from typing import Any

from signoff import ConfigError, Gate


class KeptRuns:
    """The run states one adapter keeps (`kind`, e.g. "pydantic-ai") in its gate's store.

    `framework` names the framework in messages ("Pydantic AI")."""

    def __init__(self, gate: Gate, kind: str, framework: str) -> None:
        self.gate = gate
        self.kind = kind
        self.framework = framework

    def _store(self) -> Any:
        store = self.gate.store
        if not callable(getattr(store, "save_run_state", None)):
            raise ConfigError(
                f"{type(store).__name__} keeps no run states: a {self.framework} run that waits or "
                "pauses keeps its state in a signoff store or a Client of a signoff server"
            )
        return store

    def save(self, thread_id: str, state: str) -> None:
        """Keep `state` as the thread's run state (replacing the one kept before)."""
        self._store().save_run_state(thread_id, state, kind=self.kind)

    def load(self, thread_id: str) -> str:
        """The thread's kept run state; LookupError if none is kept, ValueError if another
        adapter's is."""
        record = self._store().load_run_state(thread_id)
        if record is None:
            raise LookupError(f"no paused {self.framework} run is kept for thread {thread_id!r}")
        if record.kind != self.kind:
            raise ValueError(
                f"thread {thread_id!r} keeps a {record.kind!r} run state, not one of {self.framework}'s"
            )
        state: str = record.state
        return state

    def forget(self, thread_id: str) -> None:
        """The run finished (or its pause is over): its state is no longer kept."""
        self._store().delete_run_state(thread_id)

    async def asave(self, thread_id: str, state: str) -> None:
        await asyncio.to_thread(self.save, thread_id, state)

    async def aload(self, thread_id: str) -> str:
        return await asyncio.to_thread(self.load, thread_id)

    async def aforget(self, thread_id: str) -> None:
        await asyncio.to_thread(self.forget, thread_id)
