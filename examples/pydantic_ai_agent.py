"""A Pydantic AI agent whose email tool needs a person's approval, through signoff.

    pip install 'signoff[pydantic-ai]'
    python examples/pydantic_ai_agent.py          # runs offline: a scripted model, a local store

The agent asks to send an email and to read the inbox. Reading needs nobody and runs at once;
the email becomes a signoff request and the run ends with `DeferredToolRequests`. Its messages
are saved as JSON (the process could exit here). A person approves with an edit, in code; in
real life from the inbox (`signoff serve`), the CLI (`signoff edit ID ...`) or a chat card, from
any process. The run then resumes from the saved messages, the tool runs once with the edited
args, and the model is told the args were changed.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from pydantic_ai import Agent, ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import DeferredToolRequests

import signoff
from signoff.integrations.pydantic_ai import SignoffApprovals, resume_when_decided

sent: list[tuple[str, str | None]] = []


def send_email(to: str, body: str) -> str:
    """Send an email."""
    sent.append((to, signoff.idempotency_key()))  # pass the key on to an API that deduplicates
    return f"sent to {to}"


def read_inbox() -> str:
    """Read the inbox."""
    return "1 new message from alice: lunch?"


def scripted_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Asks for both tools first, then reports what the tools said."""
    last = messages[-1]
    if len(messages) == 1:
        return ModelResponse(
            parts=[
                ToolCallPart("read_inbox", {}, tool_call_id="call-1"),
                ToolCallPart("send_email", {"to": "alice", "body": "yes"}, tool_call_id="call-2"),
            ]
        )
    assert isinstance(last, ModelRequest)
    for part in last.parts:
        print(f"model sees ({part.part_kind}): {part.content}")
    return ModelResponse(parts=[TextPart("Replied to Alice.")])


def main(db: Path) -> None:
    store = signoff.open_store(str(db))
    rules = signoff.RuleSet(tools={"send_email": signoff.ToolEntry(requires_approval=True)})
    gate = signoff.Gate(store, rules=rules)
    approvals = SignoffApprovals(gate, agent="mailer")
    agent = Agent(
        FunctionModel(scripted_model),
        tools=[send_email, read_inbox],
        capabilities=[approvals],
        output_type=[str, DeferredToolRequests],
    )

    first = agent.run_sync("Answer Alice", conversation_id="inbox-1")
    assert isinstance(first.output, DeferredToolRequests)
    (call,) = first.output.approvals
    waiting = first.output.metadata[call.tool_call_id]["signoff"]
    print(f"paused: {waiting['description'].splitlines()[0]}")
    print(f"request {waiting['request_id']} waits for a person")
    saved = first.all_messages_json()  # keep this anywhere; the process may exit now

    store.decide(
        waiting["request_id"], signoff.Edit(args={"to": "alice", "body": "yes, at noon"}), actor="alice"
    )

    final = resume_when_decided(agent, saved, approvals)
    print(f"ai: {final.output}")
    print(f"send_email ran {len(sent)} time(s), idempotency key {sent[0][1]}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory() as folder:
            main(Path(folder) / "signoff.db")
