"""Which call an after-hook is about: CrewAI's hook contexts carry no call id.

CrewAI builds a new context for the before-hook and for the after-hook of one call, but hands
both the same `tool_input` dict (the args it parsed for that call, in the ReAct and the native
function-calling paths alike). The before-hook keeps what the model is to see under that dict's
identity, holding the dict so that its id cannot be reused by another call's while it is kept; the
after-hook takes it back only if it finds that very dict. Two crews or agents running at once in
one process (threads, tasks) each have their own dict, so neither gets the other's decision. A
context that matches nothing gets nothing from signoff: its call was never blocked by signoff.

The after-hook is registered with CrewAI only while a blocked call waits for it (`on_first`,
`on_last`): a call nobody is asked about pays for signoff's before-hook alone.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Blocked:
    """A call signoff blocked in its before-hook, and the text the model gets in its place."""

    tool_input: dict[str, Any]
    name: str
    text: str


class BlockedCalls:
    """The calls blocked by the before-hook whose after-hook has not run yet (see the module).
    `on_first` runs when the first is kept, `on_last` when the last is taken (under the lock)."""

    def __init__(self, on_first: Callable[[], None], on_last: Callable[[], None]) -> None:
        self._by_input: dict[int, Blocked] = {}
        self._lock = threading.Lock()
        self._on_first = on_first
        self._on_last = on_last

    def keep(self, tool_input: dict[str, Any], name: str, text: str) -> None:
        with self._lock:
            if not self._by_input:
                self._on_first()
            self._by_input[id(tool_input)] = Blocked(tool_input, name, text)

    def take(self, tool_input: Any, name: str) -> str | None:
        """The text kept for the call with this very `tool_input` dict (and tool), once."""
        with self._lock:
            found = self._by_input.get(id(tool_input))
            if found is None or found.tool_input is not tool_input or found.name != name:
                return None
            del self._by_input[id(tool_input)]
            if not self._by_input:
                self._on_last()
        return found.text
