"""signoff for the OpenAI Agents SDK (openai-agents >= 0.24): `pip install signoff[openai-agents]`.

    from signoff.integrations.openai_agents import SignoffApproval

    approval = SignoffApproval()
    agent = Agent(name="mail", tools=approval.gate_tools([send_email, lookup]))
    run = await approval.run(agent, "mail alice", thread_id="ticket-42")
    # paused: the process may exit; decide in signoff (inbox, CLI, chat), then anywhere:
    run = await approval.resume(agent, "ticket-42")

- `needs_approval` from signoff's rules (`.tools`): `gate_tool`/`gate_tools` for tools you have,
  `@approval.function_tool` for new ones.
- `result.interruptions` become signoff requests, keyed by (thread_id, call_id) (`.interruptions`).
- The `RunState` is kept in signoff's store, server side in remote mode, readable only by the
  agent that saved it (`.approval`); with `wait=True` too, before it waits, so `resume`
  continues a waiting run whose process died.
- Decisions: approve and edit → `state.approve(item)`; reject → `state.reject(item,
  rejection_message=<signoff's rejection text>)`; respond → `state.reject(item,
  rejection_message=<the answer>)`, so the model gets the answer as the call's output.
- Edit IS supported, for function tools signoff gated: their invoker looks up the decided
  request by call_id and runs the tool with the person's args, exactly once, through `gate.arun`
  (the SDK itself cannot run edited args). For any other tool, a rule allowing `edit` fails with
  `signoff.ConfigError` before its request is made.
- Exactly once: an approved call of a gated tool runs through signoff's execution record, so a
  resumed run replayed twice runs it once.
"""

from .approval import STATE_KIND, SignoffApproval, SignoffRun
from .interruptions import Found, apply, submit_all
from .tools import GatedInvoker, gate_tool, is_gated, signoff_needs_approval

__all__ = [
    "STATE_KIND",
    "Found",
    "GatedInvoker",
    "SignoffApproval",
    "SignoffRun",
    "apply",
    "gate_tool",
    "is_gated",
    "signoff_needs_approval",
    "submit_all",
]
