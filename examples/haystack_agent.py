"""A Haystack agent whose email tool needs a person's approval, through signoff.

    pip install 'signoff[haystack]'
    python examples/haystack_agent.py             # runs offline: a scripted model, a local store

The agent asks to read the inbox and to send an email. `SignoffPauseHook` turns the gated call into
a signoff request and stops the run (`exit_reason == "awaiting_approval"`) before any tool runs;
the history is saved and the process may exit. Here a person approves with an edit, in code; in
real life from the inbox (`signoff serve`), the CLI (`signoff edit ID ...`) or a chat card, from
any process. A new agent then resumes from the saved history: the tools run, send_email once and
with the edited args, and the model is told what changed as Haystack's own strategy tells it.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from haystack.components.agents import Agent
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage, ToolCall
from haystack.tools import tool

import signoff
from signoff.integrations.haystack import AWAITING_APPROVAL, SignoffPauseHook, resume, waiting_requests

RULES = signoff.RuleSet.model_validate(
    {"tools": {"send_email": {"requires_approval": True, "allowed_decisions": ["approve", "edit", "reject"]}}}
)
CONTEXT = {"signoff": {"thread_id": "example-1", "requester": "alice"}}

sent: list[tuple[str, str | None]] = []


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    sent.append((to, signoff.idempotency_key()))  # pass the key on to an API that deduplicates
    return f"sent to {to}"


@tool
def read_inbox() -> str:
    """Read the inbox."""
    return "1 new message from alice: 'lunch?'"


def agent(model: MockChatGenerator, gate: signoff.Gate) -> Agent:
    # leave gate= out to use the store the CLI uses (SIGNOFF_URL/SIGNOFF_TOKEN, SIGNOFF_DB)
    hook = SignoffPauseHook(gate=gate)
    return Agent(chat_generator=model, tools=[send_email, read_inbox], hooks={"before_tool": [hook]})


def main(db: Path) -> None:
    gate = signoff.Gate(signoff.open_store(str(db)), rules=RULES)
    asks = ChatMessage.from_assistant(
        tool_calls=[
            ToolCall(tool_name="read_inbox", arguments={}, id="call_1"),
            ToolCall(tool_name="send_email", arguments={"to": "alice", "body": "yes"}, id="call_2"),
        ]
    )
    paused = agent(MockChatGenerator(responses=[asks]), gate).run(
        [ChatMessage.from_user("Answer Alice")], hook_context=CONTEXT
    )
    assert paused["exit_reason"] == AWAITING_APPROVAL
    saved = json.dumps([message.to_dict() for message in paused["messages"]])  # keep it anywhere
    (request_id,) = waiting_requests(paused["messages"])
    request = gate.store.get_request(request_id)
    print("paused:", paused["exit_reason"])
    print("request:", request.id, request.tool_name, request.args)

    # The person: here in code, as `signoff edit` or the inbox would do it.
    gate.store.decide(request.id, signoff.Edit(args={"to": "alice", "body": "yes, at noon"}), actor="alice")

    history = [ChatMessage.from_dict(message) for message in json.loads(saved)]
    done = resume(
        agent(MockChatGenerator(responses="Replied to Alice."), gate), history, hook_context=CONTEXT
    )
    for message in done["messages"]:
        if message.tool_call_result is not None:
            print(f"tool: {message.tool_call_result.result}")
        elif message.text:
            print(f"{message.role.value}: {message.text}")
    print("send_email ran", len(sent), "time(s), idempotency key", sent[0][1])


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "signoff.db")
