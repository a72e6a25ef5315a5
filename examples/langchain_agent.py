"""A LangChain agent whose email tool needs a person's approval, through signoff.

    pip install 'signoff[langchain]'
    python examples/langchain_agent.py            # runs offline: a scripted model, a local store

The agent asks to send an email; the run pauses with a LangGraph interrupt (the stock
`action_requests` payload) and the request waits in signoff. Here a person approves it with an
edit, in code; in real life from the inbox (`signoff serve`), the CLI (`signoff edit ID ...`) or
a chat card, from any process. The run then resumes and the tool runs once, with the edited args.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

import signoff
from signoff.integrations.langchain import SignoffMiddleware, resume_when_decided

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


class ScriptedModel(GenericFakeChatModel):
    """A chat model that answers from a script (no network)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


def main(db: Path) -> None:
    model = ScriptedModel(
        messages=iter(
            [
                AIMessage(
                    content="",
                    tool_calls=[
                        {"name": "read_inbox", "args": {}, "id": "call_1", "type": "tool_call"},
                        {"name": "send_email", "args": {"to": "alice", "body": "yes"}, "id": "call_2"},
                    ],
                ),
                AIMessage(content="Replied to Alice."),
            ]
        )
    )
    gate = signoff.Gate(signoff.open_store(str(db)))
    middleware = SignoffMiddleware(
        interrupt_on={
            "send_email": {"allowed_decisions": ["approve", "edit", "reject"]},
            "read_inbox": False,
        },
        gate=gate,  # leave it out to use the store the CLI uses (SIGNOFF_URL/SIGNOFF_TOKEN, SIGNOFF_DB)
    )
    agent = create_agent(
        model, tools=[send_email, read_inbox], middleware=[middleware], checkpointer=InMemorySaver()
    )
    config: Any = {"configurable": {"thread_id": "example-1"}}

    paused = agent.invoke({"messages": [{"role": "user", "content": "Answer Alice"}]}, config, version="v2")
    (pause,) = paused.interrupts
    (waiting,) = pause.value["signoff"]["requests"]
    print("paused:", pause.value["action_requests"][0]["description"].splitlines()[0])
    print("request:", waiting["request_id"], waiting["name"], waiting["args"])

    # The person: here in code, as `signoff edit` or the inbox would do it.
    gate.store.decide(
        waiting["request_id"], signoff.Edit(args={"to": "alice", "body": "yes, at noon"}), actor="alice"
    )

    done = resume_when_decided(agent, config, middleware)
    for message in done.value["messages"]:
        print(f"{message.type}: {message.content}")
    print("send_email ran", len(sent), "time(s), idempotency key", sent[0][1])


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "signoff.db")
