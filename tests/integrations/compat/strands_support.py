"""Counted tools and a scripted model for the Strands tests (no model API).

The model's first turn asks for `transfer` (gated) and `lookup` (not), with the tool-use ids c0-1
and c0-2 (`turns` such turns: c1-1, c1-2...); each later turn says "done". `seen` keeps the tool
results of the model's last turn: (toolUseId, status, texts).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

from strands import Agent, tool
from strands.models.model import Model
from strands.types.content import Messages

from tests.integrations.ledger import Ledger

TRANSFER = {"amount": 5, "to": "bob"}
USER = "pay bob 5, then look up t"


def make_tools(ledger: Ledger) -> list[Any]:
    @tool
    def transfer(amount: int, to: str) -> str:
        """Transfer money.

        Args:
            amount: how much
            to: to whom
        """
        ledger.add("transfer", {"amount": amount, "to": to})
        return f"sent {amount} to {to}"

    @tool
    def lookup(table: str) -> str:
        """Read rows.

        Args:
            table: the table
        """
        ledger.add("lookup", {"table": table})
        return f"rows of {table}"

    return [transfer, lookup]


class Scripted(Model):
    """Asks for the two calls in its first turn (`turns` of them), then answers "done"."""

    def __init__(self, turns: int = 1) -> None:
        self.turns = turns
        self.seen: list[tuple[str, str, list[str]]] = []
        self.calls = 0

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    async def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError
        yield  # an async generator, as the interface says

    async def stream(
        self, messages: Messages, tool_specs: Any = None, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[Any, None]:
        self.calls += 1
        last = messages[-1]["content"]
        self.seen = [
            (
                block["toolResult"]["toolUseId"],
                block["toolResult"]["status"],
                [item.get("text", "") for item in block["toolResult"]["content"]],
            )
            for block in last
            if "toolResult" in block
        ]
        turn = sum(1 for m in messages for block in m["content"] if "toolUse" in block) // 2
        yield {"messageStart": {"role": "assistant"}}
        if turn < self.turns:
            for index, (name, args) in enumerate((("transfer", TRANSFER), ("lookup", {"table": "t"}))):
                use = {"toolUseId": f"c{turn}-{index + 1}", "name": name}
                yield {"contentBlockStart": {"start": {"toolUse": use}}}
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(args)}}}}
                yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
        else:
            yield {"contentBlockDelta": {"delta": {"text": "done"}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}


def make_agent(model: Scripted, tools: list[Any], hooks: list[Any], **options: Any) -> Agent:
    return Agent(model=model, tools=tools, hooks=hooks, callback_handler=None, **options)


def final_text(result: Any) -> str | None:
    texts = [block["text"] for block in result.message["content"] if "text" in block]
    return texts[-1] if texts else None


class OneCall(Scripted):
    """Asks for one call (`name`, `args`, `call_id`), then says "done"."""

    def __init__(self, name: str, args: dict[str, Any], call_id: str) -> None:
        super().__init__(turns=1)
        self.call = {"toolUseId": call_id, "name": name}
        self.args = args

    async def stream(
        self, messages: Messages, tool_specs: Any = None, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[Any, None]:
        asked = any("toolUse" in block for message in messages for block in message["content"])
        yield {"messageStart": {"role": "assistant"}}
        if asked:
            yield {"contentBlockDelta": {"delta": {"text": "done"}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
            return
        yield {"contentBlockStart": {"start": {"toolUse": self.call}}}
        yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(self.args)}}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use"}}
