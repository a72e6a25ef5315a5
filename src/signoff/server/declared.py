"""Noting the rules agents declare in their own code (`store.declared_ops`) from the requests
they send, without a write on every request: a (user, tool) is written when first seen by this
process, when what it declares changes, and otherwise at most once an hour (its "last seen")."""

from __future__ import annotations

import json
import threading
import time
from typing import TYPE_CHECKING, Any

from ..identity import User
from ..rules.callables import shown
from ..rules.model import RequestRule
from ..store.declared_ops import DeclaredRule

if TYPE_CHECKING:
    from .context import Server

DECLARED_SOURCES = frozenset({"code", "file", "agent"})
"""Rules of the agent's own (not the store's layers it read, which are this server's)."""
REFRESH_SECONDS = 3600.0
MAX_REMEMBERED = 10_000


class DeclaredRules:
    def __init__(self, refresh: float = REFRESH_SECONDS) -> None:
        self.refresh = refresh
        self._written: dict[tuple[str, str], tuple[str, float]] = {}
        self._lock = threading.Lock()

    def due(self, created_by: str, tool: str, agent: str | None, app: str | None, rule: RequestRule) -> bool:
        """Whether this declaration should be written now (and, if so, it counts as written)."""
        source = rule.origin.source if rule.origin is not None else "agent"
        if source not in DECLARED_SOURCES:
            return False
        said = json.dumps([agent, app, rule.snapshot()], sort_keys=True, default=str)
        now = time.monotonic()
        key = (created_by, tool)
        with self._lock:
            written = self._written.get(key)
            if written is not None and written[0] == said and now < written[1] + self.refresh:
                return False
            if len(self._written) >= MAX_REMEMBERED:
                self._written.clear()
            self._written[key] = (said, now)
            return True


def declared_view(server: Server, declared: DeclaredRule) -> dict[str, Any]:
    """A declared rule, and whose rule sets who decides for its tool on this server now:
    `server` (its rules cover the tool: they ask for it), `agent` (they don't, and the server
    takes agents' rules) or `defaults` (they don't, and it doesn't: its defaults apply)."""
    covered = server.resolver().static(declared.tool, declared.agent, declared.app)
    decides = "agent" if server.settings.agent_rules == "allow" else "defaults"
    when = None
    if covered.ask:
        decides, when = "server", shown(covered.rule.when)
    return {**declared.to_dict(), "decides": decides, "server_when": when}


def declared_for(server: Server, user: User) -> list[dict[str, Any]]:
    """What `user` may see of the declared rules: an agent its own, people and admins all."""
    return [
        declared_view(server, declared)
        for declared in server.store.declared_rules()
        if not user.is_agent or declared.created_by == user.name
    ]
