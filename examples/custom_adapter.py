"""A signoff adapter of your own: the tool calls of an OpenAI-style chat completion
(`message["tool_calls"]`), each run through signoff before it runs.

    python examples/custom_adapter.py          # runs offline: a local store, a decision made in code

An adapter hooks a framework's tool-approval point to a `Gate`. What makes it one:

- one `ToolCall` per call the model asked for, its `id` the model's tool call id and the scope's
  `thread_id` the framework's conversation: asking again (a replayed or resumed run) finds the
  same request, and never opens a second one;
- the gate decides whether to ask (the rules, the grants); the adapter never decides;
- the tool runs only through `gate.run`, once per request: a replay after it ran gets the kept
  result, and nothing runs twice;
- what the model sees is `reply.content` (the result, the edit note and the result, the
  rejection text or the person's answer);
- waiting (`wait=True`) blocks until a decision or the deadline; otherwise `Suspended` ends the
  run, and running the same message again later carries the decision out;
- fail closed: a call it cannot read or a tool it does not know runs nothing.

A package registers it under the `signoff.integrations` entry point (`signoff plugins` lists it):

    [project.entry-points."signoff.integrations"]
    chat_tools = "custom_adapter"
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from signoff import Edit, Gate, RuleSet, Scope, Suspended, ToolCall, ToolEntry, open_backend, open_store


class ChatToolApprovals:
    """Answers an assistant message's `tool_calls` with `role: tool` messages, through signoff.
    Without a gate it uses the store the CLI would (`SIGNOFF_URL`, else `SIGNOFF_DB`)."""

    def __init__(
        self,
        tools: Mapping[str, Callable[..., Any]],
        gate: Gate | None = None,
        *,
        agent: str | None = None,
        wait: bool = False,
    ) -> None:
        self.tools = dict(tools)
        self.gate = gate if gate is not None else Gate(open_backend())
        self.agent = agent
        self.wait = wait

    def tool_messages(self, message: Mapping[str, Any], *, thread_id: str) -> list[dict[str, Any]]:
        """One tool message per call. Raises `Suspended` (without `wait`) while a call waits for
        a person: end the run, and call this again with the same message later."""
        scope = Scope(thread_id=thread_id, agent=self.agent)
        answers = []
        for asked in message.get("tool_calls") or []:
            answers.append(
                {"role": "tool", "tool_call_id": asked["id"], "content": self._answer(asked, scope)}
            )
        return answers

    def _answer(self, asked: Mapping[str, Any], scope: Scope) -> str:
        function = asked.get("function") or {}
        name = str(function.get("name") or "")
        tool = self.tools.get(name)
        if tool is None:
            return f"There is no tool named {name!r}; nothing ran."
        try:
            args = json.loads(function.get("arguments") or "{}")
        except ValueError:
            return f"The arguments of {name} are not JSON; nothing ran."
        if not isinstance(args, dict):
            return f"The arguments of {name} must be a JSON object; nothing ran."
        call = ToolCall(name=name, args=args, id=str(asked["id"]))
        reply = self.gate.run(call, tool, scope, suspend=not self.wait)
        return reply.content


# -- the demo ---------------------------------------------------------------------------------

sent: list[tuple[str, str]] = []


def send_email(to: str, body: str) -> str:
    sent.append((to, body))
    return f"Email sent to {to}."


ASSISTANT = {
    "role": "assistant",
    "tool_calls": [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "send_email", "arguments": json.dumps({"to": "alice", "body": "noon?"})},
        }
    ],
}


def main(db: Path) -> None:
    store = open_store(str(db))
    gate = Gate(store, rules=RuleSet(tools={"send_email": ToolEntry(requires_approval=True)}))
    approvals = ChatToolApprovals({"send_email": send_email}, gate, agent="mailer")
    try:
        approvals.tool_messages(ASSISTANT, thread_id="chat-1")
    except Suspended as waiting:
        print(f"paused: request {waiting.pending.request_id} waits for a person")
        store.decide(
            waiting.pending.request_id, Edit(args={"to": "alice", "body": "yes, at noon"}), actor="alice"
        )
    (answer,) = approvals.tool_messages(ASSISTANT, thread_id="chat-1")  # the run, resumed
    print(f"tool: {answer['content']}")
    approvals.tool_messages(ASSISTANT, thread_id="chat-1")  # replayed again: the kept result
    print(f"send_email ran {len(sent)} time(s): {sent}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory() as folder:
            main(Path(folder) / "signoff.db")
