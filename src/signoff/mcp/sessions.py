"""Which signoff thread an MCP session's calls belong to, and each call's key in it.

Thread: `mcp:<service>:<key>`. The key is the operator's `--thread KEY` when given: every
session of the proxy shares it, and a restarted proxy with the same key finds the same requests.
Without one it is the streamable-HTTP session id, else this proxy process (stdio serves one
client per process; the 2026-07-28 era has no sessions), so a restarted proxy starts afresh.

Call key: `<tool>:<digest of the canonical args>:<n>`. The same args twice in one session may
well be two calls (list a directory, change it, list it again), so a call that got its answer
(the tool's result, a rejection, an answer) is done, and the next identical call is a new
request (n + 1). A call answered only "awaits approval" (`--max-wait`, or an in-band question
still open) or "in doubt" is parked: the next identical call takes its key over, finds the same
request and its decision, and so continues it. Identical calls in flight at the same time get
keys of their own.

The keys live in the proxy's memory. Under an operator's key, the first call of a kind this
process sees looks in the store first (`earlier`): the keys used before count, and a call of a
previous life that did not finish (still open, approved but never run, or running when the
proxy stopped) is parked, so that the client's retry finds it instead of asking again.
"""

from __future__ import annotations

import hashlib
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from .._util import canonical_json

PROCESS_ID = uuid.uuid4().hex[:12]

Earlier = Callable[[str], Awaitable[tuple[int, list[int]]]]
"""stem → (how many keys of it were used before, the unfinished ones among them)."""


@dataclass
class _Generations:
    next: int = 0
    parked: list[int] = field(default_factory=list)
    known: bool = False
    """What the store holds of this stem was read (or there is nothing to read)."""


@dataclass
class McpSession:
    thread_id: str
    lasting: bool = False
    """The operator named the thread: requests of earlier proxies may be in it."""
    _calls: defaultdict[str, _Generations] = field(default_factory=lambda: defaultdict(_Generations))
    _reading: anyio.Lock = field(default_factory=anyio.Lock)

    async def key_for(self, tool: str, args: dict[str, Any], earlier: Earlier) -> str:
        """The key of a call starting now: a parked one of the same call, else a new one."""
        stem = call_stem(tool, args)
        generations = self._calls[stem]
        if self.lasting and not generations.known:
            async with self._reading:
                if not generations.known:
                    used, unfinished = await earlier(stem)
                    generations.next = max(generations.next, used)
                    generations.parked = sorted({*generations.parked, *unfinished})
                    generations.known = True
        if generations.parked:
            n = generations.parked.pop(0)
        else:
            n = generations.next
            generations.next += 1
        return f"{stem}:{n}"

    def park(self, key: str) -> None:
        """The call with `key` was answered "awaits approval" or "in doubt": the next identical
        call continues it."""
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

    def __init__(self, service: str, thread: str | None = None) -> None:
        self.service = service
        self.thread = thread
        """The operator's key (`--thread`): one thread for every session, kept across restarts."""
        self._sessions: dict[str, McpSession] = {}

    def get(self, *, http_session: str | None) -> McpSession:
        if self.thread is not None:
            ident = self.thread
        else:
            ident = f"http-{http_session}" if http_session else PROCESS_ID
        found = self._sessions.get(ident)
        if found is None:
            found = McpSession(thread_id=f"mcp:{self.service}:{ident}", lasting=self.thread is not None)
            self._sessions[ident] = found
        return found

    def thread_ids(self) -> list[str]:
        return [session.thread_id for session in self._sessions.values()]
