"""The signoff scope of a Strands call: its thread, and who and what runs it.

The thread is the agent's session (`agent.session_id`: its session manager's id, or a random id
per agent object without one), followed by the agent's id when it is not Strands' default, so
that an agent restored by its session manager (FileSessionManager, S3, a repository) finds its
requests again in any process (signoff keys each by (thread, call_id)). The agent's
`state["signoff"]` may hold a `signoff.Scope`'s fields (a dict), overlaid on the adapter's
defaults; the session manager saves it with the agent.
"""

from __future__ import annotations

from typing import Any

from strands import Agent

from signoff import Scope

from .._scope import SCOPE_KEY, ScopeDefaults, overlay_scope, rule_fields

WHERE = f"agent.state[{SCOPE_KEY!r}]"
DEFAULT_AGENT_ID = "default"


def given_scope(agent: Agent) -> Any:
    """The agent's own scope fields (`state["signoff"]`), or None."""
    return agent.state.get(SCOPE_KEY)


def session_thread(agent: Agent) -> str:
    """The thread of the agent's calls when no scope names one."""
    session: str = agent.session_id
    if agent.agent_id == DEFAULT_AGENT_ID:
        return session
    return f"{session}/{agent.agent_id}"


def agent_scope(agent: Agent, defaults: ScopeDefaults) -> Scope:
    """The scope of the agent's calls: its thread is the agent's session unless a scope names one."""
    base = defaults
    if not defaults.thread_id:
        fields = defaults.to_dict()
        fields["thread_id"] = session_thread(agent)
        base = ScopeDefaults(**fields)
    return overlay_scope(given_scope(agent), base, where=WHERE, thread_prefix="strands-")


def who(agent: Agent, defaults: ScopeDefaults) -> tuple[str | None, str | None, str | None]:
    """(agent, app, requester): what the rules read, without building the whole scope."""
    return rule_fields(given_scope(agent), defaults, where=WHERE)
