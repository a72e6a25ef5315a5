"""A CrewAI crew whose email tool needs a person's approval, through signoff.

    pip install 'signoff[crewai]'
    python examples/crewai_agent.py           # runs offline: a scripted model, a local store

The crew's agent asks to send an email. signoff's hooks (CrewAI's global tool-call hooks) block
CrewAI's own run of the tool and make it a signoff request; the crew waits in its thread (CrewAI
has no tool-level pause, so the run cannot leave the process). A person edits the args, here in a
thread of this script; in real life from the inbox (`signoff serve`), the CLI (`signoff edit ID
...`) or a chat card, from any process. The tool runs once with the edited args, inside signoff's
execution record, and the model is told the args were changed.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

from crewai import Agent, Crew, Task
from crewai.llms.base_llm import BaseLLM
from crewai.tools import tool

import signoff
from signoff.integrations.crewai import SignoffHooks

sent: list[tuple[str, str | None]] = []


@tool("send_email")
def send_email(to: str, body: str) -> str:
    """Send an email."""
    sent.append((to, signoff.idempotency_key()))  # pass the key on to an API that deduplicates
    return f"sent to {to}"


class ScriptedModel(BaseLLM):
    """Asks for the email first (CrewAI's ReAct text), then reports what the tool said."""

    def call(self, messages: Any, *_: Any, **__: Any) -> str:  # type: ignore[override]
        texts = [m.get("content") or "" for m in messages if m.get("role") != "system"]
        observed = re.findall(
            r"Observation: ?(.*?)(?:\nAnalyze the tool result|\Z)", "\n".join(texts[1:]), re.S
        )
        if not observed:
            return 'Thought: answer Alice\nAction: send_email\nAction Input: {"to": "alice", "body": "yes"}'
        print(f"model sees: {observed[-1]!r}")
        return "Thought: done\nFinal Answer: Replied to Alice."


def person(store: signoff.Store) -> None:
    """Someone in the inbox: edits the email once it is asked about."""
    while not (waiting := store.list_requests(status="pending")):
        time.sleep(0.05)
    request = waiting[0]
    print(f"waiting: {request.tool_name} needs approval")
    print(f"request {request.id} waits for a person")
    store.decide(request.id, signoff.Edit(args={"to": "alice", "body": "yes, at noon"}), actor="alice")


def main(folder: Path) -> None:
    store = signoff.open_store(str(folder / "signoff.db"))
    rules = signoff.RuleSet(tools={"send_email": signoff.ToolEntry(requires_approval=True)})
    agent = Agent(
        role="mailer",
        goal="answer mail",
        backstory="an assistant",
        llm=ScriptedModel(model="scripted"),
        tools=[send_email],
    )
    crew = Crew(
        agents=[agent], tasks=[Task(description="Answer Alice", expected_output="a note", agent=agent)]
    )
    deciding = threading.Thread(target=person, args=(store,), daemon=True)
    deciding.start()
    with SignoffHooks(signoff.Gate(store, rules=rules), agent="mailer"):
        result = crew.kickoff()
    deciding.join()
    print(f"ai: {result.raw}")
    print(f"send_email ran {len(sent)} time(s), idempotency key {sent[0][1]}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]).parent)
    else:
        with tempfile.TemporaryDirectory() as folder:
            main(Path(folder))
