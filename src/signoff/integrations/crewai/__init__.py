"""signoff for CrewAI (crewai >= 1.15): `signoff[crewai]`.

    from signoff.integrations.crewai import SignoffHooks

    with SignoffHooks():                      # or SignoffHooks(...).install()
        crew.kickoff()

- CrewAI's global before/after tool-call hooks ask signoff's gate about each call; a call nobody
  is asked about runs as without it (`Gate.asks_nowhere` first). `agents=[...]` covers only
  those agents, so two agents (or crews) in one process can have hooks of their own.
- Waiting only: the before-hook blocks its thread until the decision (or the rule's deadline, or
  `timeout`); CrewAI has no tool-level pause, so the run cannot stop and resume in another
  process.
- All four decisions: approve runs the tool; edit runs it with the person's args; reject gives the
  model the rule's text with the reason; respond gives it the person's answer (`.results`).
- Exactly once: a gated call runs inside `gate.run` (signoff's execution record), never through
  CrewAI's own run of the tool, which the before-hook always blocks.
"""

from .hooks import SignoffHooks

__all__ = ["SignoffHooks"]
