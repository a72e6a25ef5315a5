"""An OpenAI Agents SDK agent whose email tool needs a person's approval, through signoff.

    pip install 'signoff[openai-agents]'
    python examples/openai_agents_agent.py        # runs offline: a scripted model, a local store

The agent asks to send an email and to read the inbox. Reading needs nobody and runs at once; the
email becomes a signoff request and the run pauses, its RunState kept in signoff's store (not in
this process: it holds the call's arguments). Here a person edits the call, in code; in real life
from the inbox (`signoff serve`), the CLI (`signoff edit ID ...`) or a chat card, from any process.
The run then resumes from the kept state and the tool runs once, with the edited args.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from agents import Agent, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

import signoff
from signoff.integrations.openai_agents import SignoffApproval

set_tracing_disabled(True)  # offline: no traces sent anywhere
sent: list[tuple[str, str | None]] = []


@function_tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    sent.append((to, signoff.idempotency_key()))  # pass the key on to an API that deduplicates
    return f"sent to {to}"


@function_tool
def read_inbox() -> str:
    """Read the inbox."""
    return "1 message from alice: lunch?"


RULES = {"tools": {"send_email": {"requires_approval": True, "description": "Email {to}?"}}}


async def main(db: Path) -> None:
    store = signoff.open_store(str(db))
    approval = SignoffApproval(signoff.Gate(store, rules=signoff.RuleSet.model_validate(RULES)))
    tools = approval.gate_tools([send_email, read_inbox])
    model = ScriptedModel(
        [
            [
                function_call("read_inbox", {}, call_id="call_1"),
                function_call("send_email", {"to": "alice", "body": "yes"}, call_id="call_2"),
            ],
            [assistant_message("Replied to Alice.")],
        ]
    )
    agent = Agent(name="mailer", instructions="Answer the inbox.", model=model, tools=tools)

    run = await approval.run(agent, "Answer my email", thread_id="inbox-1")
    (waiting,) = run.pending
    print(f"paused: {waiting.request.description}")
    print(f"request {waiting.request_id} waits in signoff")

    store.decide(
        waiting.request_id,
        signoff.Edit(args={"to": "alice", "body": "yes, at noon"}, comment="say when"),
        actor="alice",
    )

    run = await approval.resume(agent, "inbox-1")  # any process could do this
    assert model.last_call is not None
    for item in model.last_call.input:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            print(f"tool {item['call_id']}: {item['output']}")
    print(f"ai: {run.final_output}")
    print(f"send_email ran {len(sent)} time(s), idempotency key {sent[0][1]}")
    store.close()


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "signoff.db"))
