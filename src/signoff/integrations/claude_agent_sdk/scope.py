"""The signoff scope of a Claude Agent SDK call: its thread, and who and what runs it.

`can_use_tool` is told the call's `tool_use_id` but not its session; the PreToolUse hook, which
fires first for the same call, is told both (and where the CLI keeps the session's transcript).
`Sessions` keeps what the hook saw until `can_use_tool` takes it, so the call's thread is the
Claude session's id (a session resumed with `resume=` finds its requests again: signoff keys each
by (thread, call_id)). A call the hook did not see (no hook installed) gets the adapter's
`thread_id`, or a thread of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from signoff import Scope

from .._scope import ScopeDefaults, overlay_scope

THREAD_PREFIX = "claude-"
SEEN_AT_MOST = 4096
"""Calls the hook saw that `can_use_tool` never took (allowed by the CLI's own settings, denied
by another hook) are forgotten oldest first past this many."""


@dataclass(frozen=True)
class Seen:
    """What the PreToolUse hook was told of one call."""

    session_id: str | None
    transcript_path: str | None


class Sessions:
    """The session of each call the hook saw, by tool_use_id, until `can_use_tool` takes it."""

    def __init__(self) -> None:
        self._seen: dict[str, Seen] = {}
        self.pop = self._seen.pop
        """`pop(tool_use_id, None)`: `take` without a call more (the callback's hot path)."""

    def note(self, tool_use_id: str, seen: Seen) -> None:
        self._seen[tool_use_id] = seen
        while len(self._seen) > SEEN_AT_MOST:
            del self._seen[next(iter(self._seen))]

    def take(self, tool_use_id: str) -> Seen | None:
        return self._seen.pop(tool_use_id, None)


def call_scope(defaults: ScopeDefaults, seen: Seen | None) -> Scope:
    """The call's scope: the adapter's defaults, its thread the session's unless one is given."""
    fields = defaults.to_dict()
    if not fields.get("thread_id") and seen is not None and seen.session_id:
        fields["thread_id"] = seen.session_id
    return overlay_scope(None, ScopeDefaults(**fields), where="scope", thread_prefix=THREAD_PREFIX)
