"""The model turn a `SignoffConfirmationHook` confirms: what its strategies keep and decide.

While the stock `ConfirmationHook` asks the strategies about the turn's calls, `confirming` holds
the turn (the Agent's State, whose last message is the turn's tool calls):

- a `SignoffConfirmationStrategy` about to wait for a person first keeps the paused history in
  signoff's store, under the run's thread: the history `SignoffPauseHook` would have paused with
  (`.paused`), so that `resume(agent, None, hook_context=...)` continues the run in another
  process if this one dies while waiting;
- each decided call that may run is noted, and once the hook has applied the decisions, the
  turn's tools are swapped for copies that run those calls through their execution record
  (`.once`): a resume after a crash never runs one twice. The kept history is forgotten once
  they have run (or at once, when none runs): the pause is over.

The swap replaces entries of `state.data["tools"]`, the list Haystack (3.4) exposes to hooks and
then invokes the step's tools from; the State is the only thing a hook is given.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from haystack.components.agents.state.state import State

from signoff import Gate, Outcome, Pending, Scope, ToolCall

from .._kept import KeptRuns
from .context import fields_from_context
from .once import Decided, DecidedRuns
from .paused import history_json, paused_history

if TYPE_CHECKING:
    from .strategy import SignoffConfirmationStrategy

KIND = "haystack"
"""The `kind` of the run states (paused histories) this adapter keeps."""


def kept_runs(gate: Gate) -> KeptRuns:
    return KeptRuns(gate, KIND, "Haystack")


class Turn:
    """One turn's confirmation (see the module)."""

    __slots__ = ("_kept", "_waiting", "decided", "state")

    def __init__(self, state: State) -> None:
        self.state = state
        self.decided: list[Decided] = []
        self._waiting: list[str] = []
        self._kept: tuple[KeptRuns, str] | None = None

    def keep(
        self,
        strategy: SignoffConfirmationStrategy,
        scope: Scope,
        context: dict[str, Any] | None,
        pending: Pending,
    ) -> None:
        """Before waiting for `pending`: keep the paused history under the run's thread. A run
        that names no thread (each call then gets one of its own) has nothing to resume by."""
        if not fields_from_context(context, strategy.defaults).get("thread_id"):
            return
        self._waiting.append(pending.request_id)
        history = paused_history(self.state.data.get("messages") or [], self._waiting)
        kept = kept_runs(strategy.gate)
        kept.save(scope.thread_id, history_json(history))
        self._kept = (kept, scope.thread_id)

    def note(
        self, call: ToolCall, scope: Scope, outcome: Outcome, strategy: SignoffConfirmationStrategy
    ) -> None:
        """A strategy's decided call of this turn."""
        self.decided.append((call, scope, outcome, strategy))

    def settle(self) -> None:
        """After the decisions were applied: the decided calls run once (see the module)."""
        runs = DecidedRuns(self.decided, when_all_ran=self._forget)
        if runs:
            runs.wrap_in_place(self.state.data.get("tools") or [])
        else:
            self._forget()

    async def asettle(self) -> None:
        runs = DecidedRuns(self.decided, when_all_ran=self._forget)
        if runs:
            runs.wrap_in_place(self.state.data.get("tools") or [])
        elif self._kept is not None:
            await asyncio.to_thread(self._forget)

    def _forget(self) -> None:
        if self._kept is not None:
            kept, thread = self._kept
            kept.forget(thread)


_confirming: ContextVar[Turn | None] = ContextVar("signoff_haystack_turn", default=None)

confirming_turn = _confirming.get
"""The turn a `SignoffConfirmationHook` is confirming here, if any."""


@contextmanager
def confirming(turn: Turn) -> Iterator[None]:
    """`confirming_turn()` is `turn` inside the block."""
    token = _confirming.set(turn)
    try:
        yield
    finally:
        _confirming.reset(token)
