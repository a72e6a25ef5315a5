"""The signoff scope of an Agent Framework call: its thread, and who and what runs it.

The thread is the run's `AgentSession` (`session.session_id`), so a session saved with
`to_dict` and read back with `from_dict` in another process finds its requests again (signoff
keys each by (thread, call_id)). The session's `state["signoff"]` may hold a `signoff.Scope`'s
fields (a dict), overlaid on the adapter's defaults; it is saved with the session, so a resumed
run keeps it.
"""

from __future__ import annotations

from typing import Any

from agent_framework import AgentSession, FunctionInvocationContext

from signoff import Scope

from .._scope import SCOPE_KEY, ScopeDefaults, overlay_scope, rule_fields

WHERE = f"session.state[{SCOPE_KEY!r}]"


def given_scope(session: AgentSession | None) -> Any:
    """The session's own scope fields (`state["signoff"]`), or None."""
    return None if session is None else session.state.get(SCOPE_KEY)


def session_scope(session: AgentSession, defaults: ScopeDefaults) -> Scope:
    """The scope of the session's calls: its thread is the session's id unless a scope names one."""
    given = given_scope(session)
    base = defaults if defaults.thread_id else _with_thread(defaults, session.session_id)
    return overlay_scope(given, base, where=WHERE, thread_prefix="maf-")


def call_scope(ctx: FunctionInvocationContext, defaults: ScopeDefaults, *, durable: bool) -> Scope:
    """The scope of the call in `ctx`. Without a session, a waiting call gets a thread of its own;
    a durable one is refused (Agent Framework resumes an approval only through a session)."""
    if ctx.session is not None:
        return session_scope(ctx.session, defaults)
    required = (
        "signoff's durable mode pauses the run with an approval request, which Agent Framework "
        "resumes only through a session: run the agent with session=agent.create_session(), or "
        "use SignoffApprovals(wait=True)"
        if durable
        else None
    )
    return overlay_scope(None, defaults, where=WHERE, thread_prefix="maf-", thread_required=required)


def who(ctx: FunctionInvocationContext, defaults: ScopeDefaults) -> tuple[str | None, str | None, str | None]:
    """(agent, app, requester): what the rules read, without building the whole scope."""
    return rule_fields(given_scope(ctx.session), defaults, where=WHERE)


def _with_thread(defaults: ScopeDefaults, thread_id: str) -> ScopeDefaults:
    fields = defaults.to_dict()
    fields["thread_id"] = thread_id
    return ScopeDefaults(**fields)
