"""A Strands agent whose email tool needs a person's approval, through signoff.

    pip install 'signoff[strands]'
    python examples/strands_agent.py              # runs offline: a scripted model, a local store

The agent asks to read the inbox and to send an email. Reading needs nobody and runs at once; the
email becomes a signoff request and the run pauses with Strands' own interrupt
(`stop_reason == "interrupt"`). The agent's session is kept by a FileSessionManager (the process
could exit here). A person approves with an edit, in code; in real life from the inbox
(`signoff serve`), the CLI (`signoff edit ID ...`) or a chat card, from any process. An agent
restored from the session is resumed with the interrupt responses: the tool runs once with the
edited args, and the model is told the args were changed. Resuming a stale copy of the session
again runs nothing twice.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from strands import Agent, tool
from strands.models.model import Model
from strands.session import FileSessionManager

import signoff
from signoff.integrations.strands import SIGNOFF_KEY, SignoffHooks

sent: list[tuple[str, str | None]] = []


@tool
def send_email(to: str, body: str) -> str:
    """Send an email.

    Args:
        to: the recipient
        body: the text
    """
    sent.append((to, signoff.idempotency_key()))  # pass the key on to an API that deduplicates
    return f"sent to {to}"


@tool
def read_inbox() -> str:
    """Read the inbox."""
    return "1 new message from alice: lunch?"


class ScriptedModel(Model):
    """Asks for both tools first, then reports what the tools said."""

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    async def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError
        yield

    async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
        results = [block["toolResult"] for block in messages[-1]["content"] if "toolResult" in block]
        yield {"messageStart": {"role": "assistant"}}
        if not results:
            for call_id, name, args in (("call-1", "read_inbox", {}), ("call-2", "send_email", DRAFT)):
                yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": call_id, "name": name}}}}
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(args)}}}}
                yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
            return
        for result in sorted(results, key=lambda found: found["toolUseId"]):
            texts = [item["text"] for item in result["content"]]
            print(f"model sees ({result['toolUseId']}, {result['status']}): {texts}")
        yield {"contentBlockDelta": {"delta": {"text": "Replied to Alice."}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}


DRAFT = {"to": "alice", "body": "yes"}


def agent_over(sessions: Path, hooks: SignoffHooks) -> Agent:
    manager = FileSessionManager(session_id="mail-1", storage_dir=str(sessions))
    return Agent(
        model=ScriptedModel(),
        tools=[send_email, read_inbox],
        hooks=[hooks],
        session_manager=manager,
        callback_handler=None,
    )


def main(folder: Path) -> None:
    store = signoff.open_store(str(folder / "signoff.db"))
    rules = signoff.RuleSet(tools={"send_email": signoff.ToolEntry(requires_approval=True)})
    hooks = SignoffHooks(signoff.Gate(store, rules=rules), agent="mailer")

    result = agent_over(folder / "sessions", hooks)("Answer Alice")
    (asked,) = result.interrupts
    waiting = asked.reason[SIGNOFF_KEY]
    print(f"paused: {waiting['tool']} needs approval")
    print(f"request {waiting['request_id']} waits for a person")
    shutil.copytree(folder / "sessions", folder / "stale")  # the process may exit now

    store.decide(
        waiting["request_id"], signoff.Edit(args={"to": "alice", "body": "yes, at noon"}), actor="alice"
    )

    resumed = hooks.resume(agent_over(folder / "sessions", hooks))  # restored from its session
    assert resumed.result is not None
    print(f"ai: {resumed.result}".strip())
    hooks.resume(agent_over(folder / "stale", hooks))  # again, from the stale copy: runs nothing
    print(f"send_email ran {len(sent)} time(s), idempotency key {sent[0][1]}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]).parent)
    else:
        with tempfile.TemporaryDirectory() as folder:
            main(Path(folder))
