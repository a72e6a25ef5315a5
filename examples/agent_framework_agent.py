"""A Microsoft Agent Framework agent whose email tool needs a person's approval, through signoff.

    pip install 'signoff[agent-framework]'
    python examples/agent_framework_agent.py      # runs offline: a scripted model, a local store

The agent asks to read the inbox and to send an email. Reading needs nobody and runs at once; the
email becomes a signoff request and the run pauses with Agent Framework's own approval request.
The session is saved with `to_dict` (the process could exit here). A person approves with an
edit, in code; in real life from the inbox (`signoff serve`), the CLI (`signoff edit ID ...`) or
a chat card, from any process. The session is read back and resumed: the tool runs once with the
edited args, and the model is told the args were changed. Resuming the same saved session again
runs nothing twice.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_framework import (
    Agent,
    AgentSession,
    BaseChatClient,
    ChatMiddlewareLayer,
    ChatResponse,
    Content,
    FunctionInvocationLayer,
    Message,
    tool,
)

import signoff
from signoff.integrations.agent_framework import SignoffApprovals

sent: list[tuple[str, str | None]] = []


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    sent.append((to, signoff.idempotency_key()))  # pass the key on to an API that deduplicates
    return f"sent to {to}"


@tool
def read_inbox() -> str:
    """Read the inbox."""
    return "1 new message from alice: lunch?"


class ScriptedModel(FunctionInvocationLayer[Any], ChatMiddlewareLayer[Any], BaseChatClient[Any]):
    """Asks for both tools first, then reports what the tools said."""

    async def _inner_get_response(  # type: ignore[override]
        self, *, messages: Sequence[Message], stream: bool, options: Any, **kwargs: Any
    ) -> ChatResponse[Any]:
        results = [c for m in messages for c in m.contents if c.type == "function_result"]
        if not any(c.type == "function_call" for m in messages for c in m.contents):
            calls = [
                Content.from_function_call(call_id="call-1", name="read_inbox", arguments={}),
                Content.from_function_call(
                    call_id="call-2", name="send_email", arguments={"to": "alice", "body": "yes"}
                ),
            ]
            return ChatResponse(messages=[Message(role="assistant", contents=calls)], response_id="turn-1")
        for result in results:
            print(f"model sees ({result.call_id}): {result.result}")
        return ChatResponse(messages=[Message(role="assistant", contents=["Replied to Alice."])])


async def main(db: Path) -> None:
    store = signoff.open_store(str(db))
    rules = signoff.RuleSet(tools={"send_email": signoff.ToolEntry(requires_approval=True)})
    approvals = SignoffApprovals(signoff.Gate(store, rules=rules), agent="mailer")
    agent = Agent(
        client=ScriptedModel(), name="mailer", tools=[send_email, read_inbox], middleware=approvals.middleware
    )

    session = agent.create_session()
    first = await agent.run("Answer Alice", session=session)
    (asked,) = first.user_input_requests
    waiting = asked.additional_properties["signoff"]
    print(f"paused: {asked.function_call.name if asked.function_call else '?'} needs approval")
    print(f"request {waiting['request_id']} waits for a person")
    saved = json.dumps(session.to_dict())  # keep this anywhere; the process may exit now

    store.decide(
        waiting["request_id"], signoff.Edit(args={"to": "alice", "body": "yes, at noon"}), actor="alice"
    )

    resumed = await approvals.resume(agent, AgentSession.from_dict(json.loads(saved)))
    assert resumed.response is not None
    print(f"ai: {resumed.response.text}")
    await approvals.resume(agent, AgentSession.from_dict(json.loads(saved)))  # again: runs nothing
    print(f"send_email ran {len(sent)} time(s), idempotency key {sent[0][1]}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        asyncio.run(main(Path(sys.argv[1])))
    else:
        with tempfile.TemporaryDirectory() as folder:
            asyncio.run(main(Path(folder) / "signoff.db"))
