"""signoff for Google ADK (google-adk >= 2.13): `signoff[google-adk]`.

    from signoff.integrations.google_adk import SignoffPlugin

    signoff = SignoffPlugin()                 # or SignoffPlugin(wait=True)
    app = App(name="payments", root_agent=agent, plugins=[signoff])
    runner = Runner(app=app, session_service=...)

- A before-tool plugin asks signoff's gate about each call; a call nobody is asked about runs as
  without it (`Gate.asks_nowhere` first). `plugin.before_tool` is also an agent's
  `before_tool_callback`, for one agent of several.
- Waiting mode awaits the decision inside the run; durable mode pauses the run with ADK's own
  confirmation request (`adk_request_confirmation`) and `await signoff.resume(runner, user_id=...,
  session_id=...)` runs it on, in any process reading the same session service (in memory, SQLite,
  a database).
- All four decisions: approve runs the tool; edit runs it with the person's args; reject gives the
  model the rule's text with the reason; respond gives it the person's answer (`.results`).
- Exactly once: a call runs through signoff's execution record, so a confirmation replayed runs
  nothing twice. `signoff.gate_tools(tools)` hands tools declared `require_confirmation=True`
  to signoff's rules.
"""

from .plugin import SignoffPlugin
from .results import SIGNOFF_KEY
from .resume import Decided, Resumed, open_confirmations

__all__ = ["SIGNOFF_KEY", "Decided", "Resumed", "SignoffPlugin", "open_confirmations"]
