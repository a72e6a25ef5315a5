"""The scope of the code running now, and deterministic tool_call_ids for calls that have none.

`with gate.scope(thread_id=..., agent=..., app=...)` sets the scope for guarded calls made
inside it. A call without a model-given id gets `<tool>:<args digest>:<n>`, where n counts the
same call earlier in the same scope: a restarted run that replays its calls in the same order
gets the same ids, hence the same requests and stored results.
"""

from __future__ import annotations

import contextvars
import hashlib
import threading
from collections import defaultdict
from dataclasses import dataclass, field, replace

from ._util import canonical_json
from .calls import Scope, ToolCall


@dataclass
class ScopeState:
    scope: Scope
    counters: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_call_id(self, call: ToolCall) -> str:
        digest = hashlib.sha256(canonical_json([call.name, call.args]).encode()).hexdigest()[:16]
        stem = f"{call.name}:{digest}"
        with self.lock:
            count = self.counters[stem]
            self.counters[stem] = count + 1
        return f"{stem}:{count}"

    def with_call_id(self, call: ToolCall) -> ToolCall:
        """`call` with an id: the model's, else the next one this scope gives the same call."""
        if call.id:
            return call
        return replace(call, id=self.next_call_id(call))


current_scope: contextvars.ContextVar[ScopeState | None] = contextvars.ContextVar(
    "signoff_scope", default=None
)


def effective_scope(scope: Scope | None, default: Scope) -> Scope:
    """The scope `scope_state` gives a call, without making its state: `scope`, else the
    enclosing `gate.scope(...)`'s, else `default`."""
    if scope is not None:
        return scope
    state = current_scope.get()
    return default if state is None else state.scope


def scope_state(scope: Scope | None, default: Scope) -> ScopeState:
    """Where a guarded call runs: inside `gate.scope(...)` unless `scope` names another one
    (which then starts afresh), else `default`, afresh."""
    state = current_scope.get()
    if scope is not None and (state is None or state.scope != scope):
        return ScopeState(scope)
    if state is None:
        return ScopeState(default)
    return state
