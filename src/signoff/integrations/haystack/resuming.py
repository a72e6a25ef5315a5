"""The calls a resumed Haystack run continues with: asked about before the pause, so their
requests' decisions stand whatever the rules say now (`Gate.submit(..., resumed=True)`: no fast
path). `resume` names them for the resumed run; the pause hook and the strategies read it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_resumed: ContextVar[frozenset[str]] = ContextVar("signoff_haystack_resumed", default=frozenset())


@contextmanager
def resuming(tool_call_ids: Iterable[str | None]) -> Iterator[None]:
    """Inside, the calls with these ids are a resumed run's (see the module)."""
    token = _resumed.set(frozenset(tool_call_id for tool_call_id in tool_call_ids if tool_call_id))
    try:
        yield
    finally:
        _resumed.reset(token)


def resumed(tool_call_id: str | None) -> bool:
    """Whether the call is one a resumed run continues with."""
    return tool_call_id is not None and tool_call_id in _resumed.get()
