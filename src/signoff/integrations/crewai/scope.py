"""The signoff scope of a CrewAI call: its thread, its round, and who runs it.

The thread is the crew's (`crewai-<crew.id>`, one per `Crew` object, so one crew's calls are one
thread in the inbox) unless the hooks name one; a call outside a crew (`Agent.kickoff`) gets a
thread of its own. The agent, app and requester are the hooks' own (`SignoffHooks(agent=...)`):
hooks for each CrewAI agent (`agents=[...]`) give each its own.

CrewAI's hooks see no model turn either: the round (what an unattended run's cap counts) is the
agent executor's iteration within its task, one model turn each.
"""

from __future__ import annotations

from typing import Any

from signoff import Scope

from .._rounds import turn_round
from .._scope import ScopeDefaults, overlay_scope

WHERE = "SignoffHooks"


def call_scope(ctx: Any, defaults: ScopeDefaults) -> Scope:
    """The scope of the call in the hook context `ctx`."""
    base = defaults
    crew_id = getattr(ctx.crew, "id", None)
    if not defaults.thread_id and crew_id is not None:
        fields = defaults.to_dict()
        fields["thread_id"] = f"crewai-{crew_id}"
        base = ScopeDefaults(**fields)
    return overlay_scope(None, base, where=WHERE, thread_prefix="crewai-")


def round_of(ctx: Any) -> str | None:
    """The model turn that asked for the call: (task, agent, the executor's iteration); None (a
    round alone) when the context does not say."""
    agent = ctx.agent
    executor = getattr(agent, "agent_executor", None)
    iteration = getattr(executor, "iterations", None)
    task_id = getattr(ctx.task, "id", None)
    if agent is None or not isinstance(iteration, int) or task_id is None:
        return None
    return turn_round(f"crewai:{task_id}:{getattr(agent, 'id', '')}:{iteration}", [])
