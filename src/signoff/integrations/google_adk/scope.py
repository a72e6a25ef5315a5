"""The signoff scope of an ADK call: its thread, and who and what runs it.

The thread is the ADK session's id, so a session kept by ADK's session services (in memory,
SQLite, a database) finds its requests again in any process (signoff keys each by (thread,
call_id)). The session's `state["signoff"]` may hold a `signoff.Scope`'s fields (a dict), overlaid
on the plugin's defaults.
"""

from __future__ import annotations

from typing import Any

from google.adk.sessions import Session

from signoff import Scope

from .._scope import SCOPE_KEY, ScopeDefaults, overlay_scope, rule_fields

WHERE = f"session.state[{SCOPE_KEY!r}]"


def given_scope(session: Session) -> Any:
    """The session's own scope fields (`state["signoff"]`), or None."""
    return session.state.get(SCOPE_KEY)


def session_scope(session: Session, defaults: ScopeDefaults) -> Scope:
    """The scope of the session's calls: its thread is the session's id unless a scope names one."""
    base = defaults
    if not defaults.thread_id:
        fields = defaults.to_dict()
        fields["thread_id"] = session.id
        base = ScopeDefaults(**fields)
    return overlay_scope(given_scope(session), base, where=WHERE, thread_prefix="adk-")


def who(session: Session, defaults: ScopeDefaults) -> tuple[str | None, str | None, str | None]:
    """(agent, app, requester): what the rules read, without building the whole scope."""
    return rule_fields(given_scope(session), defaults, where=WHERE)
