"""Which signoff thread an MCP session's calls belong to, and each call's key in it.

Thread: `mcp:<service>:<session>`, the session being the streamable-HTTP session id, else this
proxy process and the client's name (stdio serves one client per process; the 2026-07-28 era
has no sessions).

Call key: `<tool>:<digest of the canonical args>:<n>`. The same args twice in one session may
well be two calls (list a directory, change it, list it again), so a call that got its answer
(the tool's result, a rejection, an answer) is done, and the next identical call is a new
request (n + 1). A call answered only "awaits approval" (`--max-wait`, or an in-band question
still open) is parked: the next identical call takes its key over, finds the same request and
its decision, and so continues it. Identical calls in flight at the same time get keys of their
own. The keys live in the proxy's memory: a restarted proxy is a new session, hence a new thread.
"""

from __future__ import annotations

import hashlib
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from .._util import canonical_json

PROCESS_ID = uuid.uuid4().hex[:12]


@dataclass
class _Generations:
    next: int = 0
    parked: list[int] = field(default_factory=list)


@dataclass
class McpSession:
    thread_id: str
    agent: str | None
    _calls: defaultdict[str, _Generations] = field(default_factory=lambda: defaultdict(_Generations))

    def key_for(self, tool: str, args: dict[str, Any]) -> str:
        """The key of a call starting now: a parked one of the same call, else a new one."""
        stem = call_stem(tool, args)
        generations = self._calls[stem]
        if generations.parked:
            n = generations.parked.pop(0)
        else:
            n = generations.next
            generations.next += 1
        return f"{stem}:{n}"

    def park(self, key: str) -> None:
        """The call with `key` was answered "awaits approval": the next identical call continues it."""
        stem, _, n = key.rpartition(":")
        generations = self._calls[stem]
        if int(n) not in generations.parked:
            generations.parked.append(int(n))
            generations.parked.sort()


def call_stem(tool: str, args: dict[str, Any]) -> str:
    digest = hashlib.sha256(canonical_json([tool, args]).encode()).hexdigest()[:16]
    return f"{tool}:{digest}"


class Sessions:
    """The proxy's MCP sessions, found by what identifies one."""

    def __init__(self, service: str) -> None:
        self.service = service
        self._sessions: dict[str, McpSession] = {}

    def get(self, *, http_session: str | None, client_name: str | None) -> McpSession:
        ident = f"http-{http_session}" if http_session else f"{PROCESS_ID}-{client_name or 'client'}"
        found = self._sessions.get(ident)
        if found is None:
            found = McpSession(thread_id=f"mcp:{self.service}:{ident}", agent=client_name)
            self._sessions[ident] = found
        return found

    def thread_ids(self) -> list[str]:
        return [session.thread_id for session in self._sessions.values()]
