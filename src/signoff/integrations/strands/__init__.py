"""signoff for Strands Agents (strands-agents >= 1.62): `signoff[strands]`.

    from signoff.integrations.strands import SignoffHooks

    signoff = SignoffHooks()                  # or SignoffHooks(wait=True)
    agent = Agent(model=..., tools=[transfer, lookup], hooks=[signoff],
                  session_manager=FileSessionManager(session_id="nightly-1"))

- A `BeforeToolCallEvent` hook asks signoff's gate about each call; a call nobody is asked about
  runs as without it (`Gate.asks_nowhere` first).
- Waiting mode waits for the decision inside the run; durable mode pauses the run with Strands'
  own interrupt (`stop_reason == "interrupt"`) and `signoff.resume(agent)` runs it on with the
  interrupt responses, in any process that restores the agent from its session manager.
- All four decisions: approve runs the tool; edit runs it with the person's args; reject gives the
  model the rule's text with the reason; respond gives it the person's answer (`.results`).
- Exactly once: a call runs through signoff's execution record, so a stale session resumed again
  runs nothing twice.
"""

from .hooks import SignoffHooks
from .results import INTERRUPT_NAME, SIGNOFF_KEY
from .resume import Decided, Resumed, open_interrupts

__all__ = ["INTERRUPT_NAME", "SIGNOFF_KEY", "Decided", "Resumed", "SignoffHooks", "open_interrupts"]
