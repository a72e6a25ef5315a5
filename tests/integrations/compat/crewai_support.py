"""Counted tools, a scripted model and a crew for the CrewAI tests (no model API).

CrewAI's hooks are process-global: every test uninstalls what it installs (`SignoffHooks` as a
context manager). The scripted model asks for `transfer` in its first turn (CrewAI's ReAct text
path: `BaseLLM` has no native function calling), then gives the last observation as its final
answer, so what the model saw in the tool's place is the crew's output, word for word.
"""

from __future__ import annotations

import json
import re
from typing import Any

from crewai import Agent, Crew, Task
from crewai.llms.base_llm import BaseLLM
from crewai.tools import BaseTool, tool

from tests.integrations.ledger import Ledger

TRANSFER = {"amount": 5, "to": "bob"}
OBSERVATION = re.compile(r"Observation: ?(.*?)(?:\nAnalyze the tool result|\Z)", re.S)
"""What CrewAI gave the model in a tool's place (it follows it with its own instruction)."""


class Scripted(BaseLLM):
    """Asks for `action` in each of its first `turns` turns (the amount counting up from `args`'
    when there are several), then answers with the observations, " | " between them."""

    action: str = "transfer"
    args: dict[str, Any] = TRANSFER
    turns: int = 1

    def call(self, messages: Any, *_: Any, **__: Any) -> str:  # type: ignore[override]
        texts = (
            [messages]
            if isinstance(messages, str)
            else [str(m.get("content") or "") for m in messages if m.get("role") != "system"]
        )
        observed = OBSERVATION.findall("\n".join(texts[1:]))  # the system prompt has a sample one
        if len(observed) < self.turns:
            args = self.args if not observed else {**self.args, "amount": self.args["amount"] + len(observed)}
            return f"Thought: go\nAction: {self.action}\nAction Input: {json.dumps(args)}"
        return f"Thought: done\nFinal Answer: {' | '.join(observed)}"


def make_tools(ledger: Ledger) -> list[BaseTool]:
    @tool("transfer")
    def transfer(amount: int, to: str) -> str:
        """Transfer money."""
        ledger.add("transfer", {"amount": amount, "to": to})
        return f"sent {amount} to {to}"

    @tool("lookup")
    def lookup(table: str) -> str:
        """Read rows."""
        ledger.add("lookup", {"table": table})
        return f"rows of {table}"

    return [transfer, lookup]


def make_crew(ledger: Ledger, *, role: str = "payer", model: Scripted | None = None) -> tuple[Crew, Agent]:
    agent = Agent(
        role=role,
        goal="move money",
        backstory="a careful clerk",
        llm=model or Scripted(model="scripted"),
        tools=make_tools(ledger),
        max_iter=6,
    )
    task = Task(description="pay bob 5", expected_output="what happened", agent=agent)
    return Crew(agents=[agent], tasks=[task]), agent


def kickoff(crew: Crew) -> str:
    return str(crew.kickoff().raw)
