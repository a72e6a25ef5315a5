"""The calls a resumed Haystack run continues with: asked about before the pause, so their
requests' decisions stand whatever the rules say now (`Gate.submit(..., resumed=True)`: no fast
path). `resume` names them for the resumed run; the pause hook and the strategies read it."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_resumed: ContextVar[frozenset[str]] = ContextVar("signoff_haystack_resumed", default=frozenset())


class _Resumes:
    """How many resumed runs are under way in this process (in any thread or task): while none
    is, no call is a resumed run's, and a strategy's hot path need not read the context."""

    def __init__(self) -> None:
        self.open = 0
        self._lock = threading.Lock()

    def add(self, count: int) -> None:
        with self._lock:
            self.open += count


resumes = _Resumes()


@contextmanager
def resuming(tool_call_ids: Iterable[str | None]) -> Iterator[None]:
    """Inside, the calls with these ids are a resumed run's (see the module)."""
    token = _resumed.set(frozenset(tool_call_id for tool_call_id in tool_call_ids if tool_call_id))
    resumes.add(1)
    try:
        yield
    finally:
        resumes.add(-1)
        _resumed.reset(token)


resumed_ids = _resumed.get
"""The ids of the calls a resumed run continues with (`resumed` without the call, for hot paths)."""


def resumed(tool_call_id: str | None) -> bool:
    """Whether the call is one a resumed run continues with."""
    return tool_call_id is not None and tool_call_id in _resumed.get()
