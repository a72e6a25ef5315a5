"""Every refusal is audited (DESIGN §8): who was refused what, where, and why.

The API's error handler writes each refusal (401, 403) as it turns it into an answer, naming
the caller, the request in the path and the reason (`access.refused`). Checks that have more to
say write their own, where they are raised: a request someone may not see or change
(`request.view_refused`, `request.change_refused`), a decision someone may not make
(`decision.refused`, also written by the store for the library and the CLI), a key reused for
another tool (`request.create_refused`). The inbox turns refusals into pages, so the checks it
meets write theirs at the source, and so does its refusal of agents. An error is marked once
written (`SignoffError.audited`): nothing is written twice.

Failed sign-ins (a missing, wrong, expired or revoked token or session; an unknown, used or
expired login or handle link) are counted per source address: its first in a minute is written
(`auth.refused`) with how many it stands for (itself and those since the source's previous
entry); the rest of that minute only count. So a flood costs at most one entry per source and
minute, and nothing is lost from the tally. They also count against the source's limit, past
which its sign-ins are refused for a while (`sign_in_limit`, `auth.limited`).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastapi import Request as HttpRequest

from ..errors import AccessError, NotAnApprover, SignoffError
from ..store import Store
from .sign_in_limit import source_of

if TYPE_CHECKING:
    from .context import Server

log = logging.getLogger("signoff.server")
REFUSED = "access.refused"
SIGN_IN_REFUSED = "auth.refused"
ANONYMOUS = "anonymous"
WINDOW_SECONDS = 60.0
MAX_SOURCES = 10_000
OTHER_SOURCES = "*"
"""Where failed sign-ins are counted once `MAX_SOURCES` addresses have been seen in a window."""


def is_refusal(error: SignoffError) -> bool:
    """A 401 or 403: the caller may not do what they asked."""
    return isinstance(error, AccessError | NotAnApprover)


def audit_refusal(
    store: Store,
    error: SignoffError,
    *,
    actor: str,
    channel: str,
    request_id: str | None = None,
    action: str = REFUSED,
    data: dict[str, Any] | None = None,
) -> SignoffError:
    """Write `error` to the audit log (once) and return it, to be raised. A store that cannot
    write does not turn the refusal into another error: it is logged instead."""
    if not error.audited:
        entry = {"reason": error.message, "error": type(error).__name__, **(data or {})}
        try:
            store.record(action, actor=actor, channel=channel, request_id=request_id, data=entry)
        except Exception:
            log.exception("could not audit the refusal of %s: %s", actor, error.message)
        error.audited = True
    return error


async def audit_refused_call(http: HttpRequest, error: SignoffError) -> None:
    """The API's refusals, as its error handler answers them: by the caller, if known."""
    from .context import server_of

    if error.audited or not is_refusal(error):
        return
    server = server_of(http)
    caller = getattr(http.state, "caller", None)
    actor, channel = (caller.user.name, caller.channel) if caller is not None else (ANONYMOUS, "api")
    request_id = http.path_params.get("request_id")
    data = {"method": http.method, "path": http.url.path}
    await server.run(
        audit_refusal,
        server.store,
        error,
        actor=actor,
        channel=channel,
        request_id=request_id if isinstance(request_id, str) else None,
        data=data,
    )


@dataclass
class _Tally:
    next_entry: float
    unwritten: int = 0
    channel: str = "api"
    reason: str = ""


@dataclass(frozen=True)
class SignInEntry:
    source: str
    channel: str
    reason: str
    refused: int

    def write(self, store: Store) -> None:
        data = {"source": self.source, "reason": self.reason, "refused": self.refused}
        try:
            store.record(SIGN_IN_REFUSED, actor=ANONYMOUS, channel=self.channel, data=data)
        except Exception:
            log.exception("could not audit %d failed sign-in(s) from %s", self.refused, self.source)


class SignInRefusals:
    """Failed sign-ins per source address, written at most once a window per source."""

    def __init__(self, window: float = WINDOW_SECONDS, max_sources: int = MAX_SOURCES) -> None:
        self.window = window
        self.max_sources = max_sources
        self._tallies: dict[str, _Tally] = {}
        self._lock = threading.Lock()

    def note(self, source: str, reason: str, *, channel: str, now: float | None = None) -> SignInEntry | None:
        """Count one failed sign-in; the entry to write now, if one is due."""
        now = time.monotonic() if now is None else now
        with self._lock:
            tally = self._tallies.get(source)
            if tally is None:
                if len(self._tallies) >= self.max_sources:
                    self._forget_quiet(now)
                if len(self._tallies) >= self.max_sources:
                    source = OTHER_SOURCES
                    tally = self._tallies.get(source)
            if tally is None:
                tally = self._tallies[source] = _Tally(next_entry=now)
            tally.unwritten += 1
            tally.channel, tally.reason = channel, reason
            if now < tally.next_entry:
                return None
            entry = SignInEntry(source, channel, reason, tally.unwritten)
            tally.unwritten = 0
            tally.next_entry = now + self.window
            return entry

    def drain(self) -> list[SignInEntry]:
        """What was counted but not yet written (at shutdown)."""
        with self._lock:
            entries = [
                SignInEntry(source, tally.channel, tally.reason, tally.unwritten)
                for source, tally in self._tallies.items()
                if tally.unwritten
            ]
            self._tallies.clear()
        return entries

    def _forget_quiet(self, now: float) -> None:
        for source, tally in list(self._tallies.items()):
            if tally.unwritten == 0 and tally.next_entry <= now:
                del self._tallies[source]


def count_failed_sign_in(
    server: Server, http: HttpRequest, reason: str, *, channel: str
) -> SignInEntry | None:
    """Count one failed sign-in from the request's address, against its limit (`sign_in_limit`)
    and in its tally; the tally's entry to write now, if one is due."""
    source = source_of(http)
    server.limiter.failed(source)
    return server.sign_ins.note(source, reason, channel=channel)


async def refuse_sign_in(server: Server, http: HttpRequest, error: SignoffError) -> None:
    """Count a failed sign-in (and write its entry when one is due); marks `error` audited."""
    channel = "api" if http.headers.get("authorization") else "web"
    entry = count_failed_sign_in(server, http, error.message, channel=channel)
    if entry is not None:
        await server.run(entry.write, server.store)
    error.audited = True


def refuse_sign_in_now(server: Server, http: HttpRequest, reason: str) -> None:
    """`refuse_sign_in` for a page answered in a worker thread (a login or handle link)."""
    entry = count_failed_sign_in(server, http, reason, channel="web")
    if entry is not None:
        entry.write(server.store)


async def refuse_if_limited(server: Server, http: HttpRequest, *, channel: str) -> None:
    """Raise TooManySignIns (audited once a window) if the request's address has failed to sign
    in too often of late; before any credential of it is checked."""
    limited = server.limiter.check(source_of(http))
    if limited is not None:
        if limited.audit:
            await server.run(limited.write, server.store, server.limiter.limit, channel=channel)
        raise limited.error()


def refuse_if_limited_now(server: Server, http: HttpRequest) -> None:
    """`refuse_if_limited` for a page answered in a worker thread."""
    limited = server.limiter.check(source_of(http))
    if limited is not None:
        if limited.audit:
            limited.write(server.store, server.limiter.limit, channel="web")
        raise limited.error()
