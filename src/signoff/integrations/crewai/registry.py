"""The CrewAI hooks signoff registers in a process, and which `SignoffHooks` answers for a call.

CrewAI's tool hooks are process-global: every crew's and agent's calls reach every hook. So
signoff registers one before-hook (and one after-hook while a blocked call waits for it: see
`.calls`), however many `SignoffHooks` are installed, and hands each call to the installed hooks
that cover its agent: those naming the agent (`agents=[...]`, by the agent's key), else the ones
covering every other agent (`agents=None`). Two installed hooks covering the same agent (or two
for all) are refused when the second is installed, so no call is ever decided by hooks that were
not meant for it.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from crewai.hooks import (
    register_after_tool_call_hook,
    register_before_tool_call_hook,
    unregister_after_tool_call_hook,
    unregister_before_tool_call_hook,
)

from .calls import BlockedCalls
from .results import refused

if TYPE_CHECKING:
    from .hooks import SignoffHooks


class Installed:
    """The installed `SignoffHooks` of this process (see the module)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.by_agent: dict[Any, SignoffHooks] = {}
        """The hooks naming agents, by agent key (`hooks.agent_key`)."""
        self.rest: SignoffHooks | None = None
        """The hooks for every agent no other hooks name."""
        self._count = 0

    def add(self, hooks: SignoffHooks) -> None:
        with self._lock:
            if hooks.agent_keys is None:
                if self.rest is not None:
                    raise ValueError(
                        "SignoffHooks for every agent are installed already: uninstall them first, "
                        "or give each SignoffHooks the agents it covers (agents=[...])"
                    )
            else:
                taken = sorted(str(key) for key in hooks.agent_keys if key in self.by_agent)
                if taken:
                    raise ValueError(f"agents {taken} are covered by other installed SignoffHooks")
            if self._count == 0:
                register_before_tool_call_hook(before_tool_call)
            self._count += 1
            if hooks.agent_keys is None:
                self.rest = hooks
            else:
                self.by_agent.update(dict.fromkeys(hooks.agent_keys, hooks))

    def remove(self, hooks: SignoffHooks) -> bool:
        """Uninstall `hooks`; False if they were not installed."""
        with self._lock:
            if hooks.agent_keys is None:
                if self.rest is not hooks:
                    return False
                self.rest = None
            else:
                if not any(self.by_agent.get(key) is hooks for key in hooks.agent_keys):
                    return False
                for key in hooks.agent_keys:
                    self.by_agent.pop(key, None)
            self._count -= 1
            if self._count == 0:
                unregister_before_tool_call_hook(before_tool_call)
            return True

    def covering(self, agent: Any) -> SignoffHooks | None:
        """The installed hooks that answer for `agent`'s calls, if any."""
        if self.by_agent:
            found = self.by_agent.get(getattr(agent, "key", None))
            if found is not None:
                return found
        return self.rest


INSTALLED = Installed()


def _listen_after() -> None:
    register_after_tool_call_hook(after_tool_call)


def _stop_listening_after() -> None:
    unregister_after_tool_call_hook(after_tool_call)


BLOCKED = BlockedCalls(on_first=_listen_after, on_last=_stop_listening_after)
"""The calls signoff's before-hooks blocked, waiting for their after-hook (one table for every
installed `SignoffHooks`: a call's args dict is its own whoever blocked it)."""


def before_tool_call(ctx: Any) -> bool | None:
    """signoff's one before-hook: None lets the call run as without signoff; False blocks it
    (signoff ran it, or replaced it, and the after-hook gives the model what to see)."""
    try:
        installed = INSTALLED  # the common case (no agents named) without a method call
        hooks = installed.covering(ctx.agent) if installed.by_agent else installed.rest
        if hooks is None or hooks.nowhere[ctx.tool_name]:
            return None  # the fast path: nobody is asked about this call
    except Exception as error:
        # CrewAI runs the tool when a hook raises: a call signoff cannot place is blocked
        BLOCKED.keep(ctx.tool_input, ctx.tool_name, refused(ctx.tool_name, error))
        return False
    return hooks.before(ctx)


def after_tool_call(ctx: Any) -> str | None:
    """signoff's one after-hook, registered while a blocked call waits for it: the text kept for
    a call signoff blocked, None for any other."""
    return BLOCKED.take(ctx.tool_input, ctx.tool_name)
