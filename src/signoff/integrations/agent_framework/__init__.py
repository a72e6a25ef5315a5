"""signoff for Microsoft Agent Framework (agent-framework-core >= 1.23): `signoff[agent-framework]`.

    from signoff.integrations.agent_framework import SignoffApprovals

    approvals = SignoffApprovals()            # or SignoffApprovals(wait=True)
    agent = Agent(client=..., tools=[transfer, lookup], middleware=approvals.middleware)

- A function middleware asks signoff's gate about each call (`.middleware`); a call nobody is
  asked about runs as without it (`Gate.asks_nowhere` first).
- Waiting mode awaits the decision inside the run; durable mode pauses the run with Agent
  Framework's approval request and `approvals.resume(agent, session)` runs it on, in any process,
  from a session saved with `to_dict` (or kept in signoff's store: `keep`/`kept`).
- All four decisions: approve runs the tool; edit runs it with the person's args; reject gives the
  model the rule's text with the reason; respond gives it the person's answer (`.results`).
- Exactly once: a call runs through signoff's execution record, so a stale session resumed twice
  runs nothing twice. signoff's rules say which calls ask: `approvals.gate_tools(tools)` hands
  tools declared `approval_mode="always_require"` to them.
"""

from .approvals import STATE_KIND, Decided, Resumed, SignoffApprovals, open_requests
from .middleware import SignoffFailure, SignoffMiddleware
from .results import SIGNOFF_KEY
from .turns import TurnRecorder

__all__ = [
    "SIGNOFF_KEY",
    "STATE_KIND",
    "Decided",
    "Resumed",
    "SignoffApprovals",
    "SignoffFailure",
    "SignoffMiddleware",
    "TurnRecorder",
    "open_requests",
]
