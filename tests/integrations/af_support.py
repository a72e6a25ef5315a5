"""Counted tools and a scripted chat client for the Agent Framework tests (no model API).

The client is the framework's own function-invocation and chat-middleware layers over a
`BaseChatClient` whose model is a script: its first turn asks for `transfer` (gated) and `lookup`
(not), each later turn says what it saw. `seen` keeps the tool results of the model's last turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_framework import (
    Agent,
    BaseChatClient,
    ChatMiddlewareLayer,
    ChatResponse,
    Content,
    FunctionInvocationLayer,
    Message,
    tool,
)

from tests.integrations.ledger import Ledger

TRANSFER = {"amount": 5, "to": "bob"}
USER = "pay bob 5, then look up t"


def make_tools(ledger: Ledger) -> list[Any]:
    @tool
    def transfer(amount: int, to: str) -> str:
        """Transfer money."""
        ledger.add("transfer", {"amount": amount, "to": to})
        return f"sent {amount} to {to}"

    @tool
    def lookup(table: str) -> str:
        """Read rows."""
        ledger.add("lookup", {"table": table})
        return f"rows of {table}"

    return [transfer, lookup]


class ScriptedClient(FunctionInvocationLayer[Any], ChatMiddlewareLayer[Any], BaseChatClient[Any]):
    """A model that asks for the two calls in its first turn (a turn per `turns`), then answers."""

    def __init__(self, turns: int = 1) -> None:
        super().__init__()
        self.turns = turns
        self.seen: list[tuple[str, str]] = []
        self.calls = 0

    async def _inner_get_response(  # type: ignore[override]
        self, *, messages: Sequence[Message], stream: bool, options: Any, **kwargs: Any
    ) -> ChatResponse[Any]:
        self.calls += 1
        results = [c for m in messages for c in m.contents if c.type == "function_result"]
        self.seen = [(str(r.call_id), str(r.result)) for r in results]
        asked = sum(1 for m in messages for c in m.contents if c.type == "function_call")
        turn = asked // 2
        if turn < self.turns:
            message = Message(
                role="assistant",
                contents=[
                    Content.from_function_call(call_id=f"c{turn}-1", name="transfer", arguments=TRANSFER),
                    Content.from_function_call(call_id=f"c{turn}-2", name="lookup", arguments={"table": "t"}),
                ],
            )
        else:
            message = Message(role="assistant", contents=["done"])
        return ChatResponse(messages=[message], response_id=f"resp-{self.calls}")


def make_agent(client: Any, tools: list[Any], middleware: list[Any]) -> Agent[Any]:
    return Agent(client=client, name="payer", tools=tools, middleware=middleware)


class OneCall(FunctionInvocationLayer[Any], ChatMiddlewareLayer[Any], BaseChatClient[Any]):
    """A model that asks for one call, then says "done"."""

    def __init__(self, name: str, arguments: dict[str, Any], call_id: str) -> None:
        super().__init__()
        self.call = (name, arguments, call_id)

    async def _inner_get_response(  # type: ignore[override]
        self, *, messages: Sequence[Message], stream: bool, options: Any, **kwargs: Any
    ) -> ChatResponse[Any]:
        name, arguments, call_id = self.call
        if any(c.type == "function_call" for m in messages for c in m.contents):
            return ChatResponse(messages=[Message(role="assistant", contents=["done"])])
        call = Content.from_function_call(call_id=call_id, name=name, arguments=arguments)
        return ChatResponse(messages=[Message(role="assistant", contents=[call])], response_id="one")
