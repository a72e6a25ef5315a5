"""signoff for the Claude Agent SDK (claude-agent-sdk >= 0.2.189): `signoff[claude-agent-sdk]`.

    from signoff.integrations.claude_agent_sdk import SignoffPermissions

    permissions = SignoffPermissions(agent="payments")
    options = permissions.options(allowed_tools=["Read"], mcp_servers={...})
    async for message in query(prompt=..., options=options):
        ...

- `can_use_tool` asks signoff's gate about each call the CLI would prompt for, and a PreToolUse
  hook makes the CLI prompt for every call signoff's rules ask about (the CLI skips
  `can_use_tool` for a call its own settings allow); a call nobody is asked about runs as without
  signoff (`Gate.asks_nowhere` first). A call the CLI prompts for on its own asks a person unless
  a rule in force turns the tool off (fail closed).
- Waiting mode: the call waits for the decision inside the run (the SDK is async only). No
  durable mode: see `.permissions`.
- Three decisions: approve runs the tool; edit runs it with the person's input (`updated_input`,
  the rule's modify note after its result); reject denies it with the rule's text and the reason.
  A person's answer (respond) cannot be the tool's result in this SDK: the call does not run and
  the model is told, with the answer (`.results`).
- Exactly once: a call goes through signoff's execution record, so a call asked about again (a
  resumed session) is denied, not run twice.
"""

from .permissions import SignoffPermissions
from .results import HANDED_OVER, respond_text

__all__ = ["HANDED_OVER", "SignoffPermissions", "respond_text"]
