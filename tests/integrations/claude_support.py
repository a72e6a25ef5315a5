"""The Claude Code CLI's side of the SDK's control protocol, scripted (no CLI, no model): what
every Claude Agent SDK adapter test drives through the SDK's public `transport=` parameter.

One model turn asks for the script's calls; for each, the CLI's permission flow as the SDK's
docs give it: the PreToolUse hooks first (deny wins over ask over allow), then a call a hook
asked about, or not in `allowed_tools`, goes to `can_use_tool`; an allowed call runs (counted in
the ledger) with the input the answer gave, then the PostToolUse hooks. What the model would be
given next for each call is kept in `seen`: the tool's result, or the denial's message.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query
from claude_agent_sdk._internal.transport import Transport

from .ledger import Ledger

SESSION = "sess-1"
MESSAGE_ID = "msg_01"


@dataclass(frozen=True)
class Call:
    name: str
    input: dict[str, Any]
    id: str


@dataclass
class Seen:
    """What the model is given for one call."""

    tool_use_id: str
    content: str
    is_error: bool
    context: list[str] = field(default_factory=list)
    """PostToolUse hooks' `additionalContext`, after the result."""

    def as_row(self) -> list[Any]:
        return [self.tool_use_id, self.content, self.is_error, self.context]


def make_tools(ledger: Ledger) -> dict[str, Callable[..., str]]:
    """The tools the scripted CLI runs, each run counted in `ledger`."""

    def transfer(amount: int, to: str) -> str:
        ledger.add("mcp__pay__transfer", {"amount": amount, "to": to})
        return f"sent {amount} to {to}"

    def lookup(table: str) -> str:
        ledger.add("mcp__pay__lookup", {"table": table})
        return f"rows of {table}"

    return {"mcp__pay__transfer": transfer, "mcp__pay__lookup": lookup}


TRANSFER = Call("mcp__pay__transfer", {"amount": 5, "to": "bob"}, "toolu_01")
LOOKUP = Call("mcp__pay__lookup", {"table": "t"}, "toolu_02")


class ScriptedCLI(Transport):
    """The CLI's end of the SDK's stdio protocol, for one scripted model turn (see the module)."""

    def __init__(
        self,
        calls: list[Call],
        tools: dict[str, Callable[..., str]],
        *,
        allowed_tools: frozenset[str] = frozenset(),
        transcript: Path | None = None,
        session_id: str = SESSION,
    ) -> None:
        self.calls = calls
        self.tools = tools
        self.allowed_tools = allowed_tools
        self.transcript = transcript
        self.session_id = session_id
        self.hook_ids: dict[str, list[str]] = {}
        self.asked: list[str] = []
        """The tool_use_ids `can_use_tool` was asked about."""
        self.hook_answers: list[Any] = []
        self.seen: list[Seen] = []
        self.interrupted = False
        self._out: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._answers: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._turn: asyncio.Task[None] | None = None

    # -- the Transport ---------------------------------------------------------------------

    async def connect(self) -> None:
        return None

    def is_ready(self) -> bool:
        return True

    async def close(self) -> None:
        if self._turn is not None and not self._turn.done():
            self._turn.cancel()

    async def end_input(self) -> None:
        await self._out.put(None)  # the CLI exits when its stdin closes

    async def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        while (message := await self._out.get()) is not None:
            yield message

    async def write(self, data: str) -> None:
        message = json.loads(data)
        kind = message["type"]
        if kind == "control_request" and message["request"]["subtype"] == "initialize":
            for event, matchers in (message["request"].get("hooks") or {}).items():
                for matcher in matchers:
                    self.hook_ids.setdefault(event, []).extend(matcher["hookCallbackIds"])
            await self._reply(message["request_id"], {})
        elif kind == "control_request":
            await self._reply(message["request_id"], {})
        elif kind == "user" and self._turn is None:
            self._turn = asyncio.create_task(self._model_turn())
        elif kind == "control_response":
            response = message["response"]
            future = self._answers.pop(response["request_id"])
            if response["subtype"] == "error":
                future.set_exception(AssertionError(response["error"]))
            else:
                future.set_result(response.get("response") or {})

    # -- the CLI ---------------------------------------------------------------------------

    async def _model_turn(self) -> None:
        blocks = [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.input} for c in self.calls]
        if self.transcript is not None:
            with self.transcript.open("a", encoding="utf-8") as out:
                for block in blocks:  # the CLI writes one line per content block
                    line = {"type": "assistant", "message": {"id": MESSAGE_ID, "content": [block]}}
                    out.write(json.dumps(line) + "\n")
        await self._emit_assistant(blocks)
        for call in self.calls:
            seen = await self._one_call(call)
            self.seen.append(seen)
            result = {"type": "tool_result", "tool_use_id": call.id, "content": seen.content}
            await self._out.put(self._message("user", [{**result, "is_error": seen.is_error}]))
            if self.interrupted:
                break
        if not self.interrupted:
            await self._emit_assistant([{"type": "text", "text": "done"}])
        await self._out.put(
            {
                "type": "result",
                "subtype": "success",
                "duration_ms": 1,
                "duration_api_ms": 0,
                "is_error": False,
                "num_turns": 1,
                "session_id": self.session_id,
            }
        )

    async def _one_call(self, call: Call) -> Seen:
        decisions = []
        for hook_id in self.hook_ids.get("PreToolUse", []):
            hook_input = self._hook_input("PreToolUse", call)
            answer = await self._ask("hook_callback", callback_id=hook_id, input=hook_input)
            self.hook_answers.append(answer)
            decisions.append((answer.get("hookSpecificOutput") or {}).get("permissionDecision"))
        for verdict in ("deny", "ask", "allow"):
            if verdict in decisions:
                break
        else:
            verdict = "allow" if call.name in self.allowed_tools else "ask"
        given = call.input
        if verdict == "deny":
            return Seen(call.id, "denied by a hook", True)
        if verdict == "ask":
            self.asked.append(call.id)
            answer = await self._ask(
                "can_use_tool",
                tool_name=call.name,
                input=call.input,
                tool_use_id=call.id,
                permission_suggestions=None,
                blocked_path=None,
            )
            if answer["behavior"] == "deny":
                self.interrupted = bool(answer.get("interrupt"))
                return Seen(call.id, answer["message"], True)
            given = answer["updatedInput"]
        output = self.tools[call.name](**given)
        context = []
        for hook_id in self.hook_ids.get("PostToolUse", []):
            hook_input = {**self._hook_input("PostToolUse", call), "tool_input": given}
            hook_input["tool_response"] = output
            answer = await self._ask("hook_callback", callback_id=hook_id, input=hook_input)
            extra = (answer.get("hookSpecificOutput") or {}).get("additionalContext")
            if extra:
                context.append(extra)
        return Seen(call.id, output, False, context)

    def _hook_input(self, event: str, call: Call) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "transcript_path": str(self.transcript) if self.transcript else "",
            "cwd": "/tmp",
            "hook_event_name": event,
            "tool_name": call.name,
            "tool_input": call.input,
            "tool_use_id": call.id,
        }

    async def _ask(self, subtype: str, **request: Any) -> dict[str, Any]:
        request_id = f"cli-{next(self._ids)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._answers[request_id] = future
        if subtype == "hook_callback":
            request["tool_use_id"] = request["input"]["tool_use_id"]
        await self._out.put(
            {"type": "control_request", "request_id": request_id, "request": {"subtype": subtype, **request}}
        )
        return await future

    async def _reply(self, request_id: str, response: dict[str, Any]) -> None:
        await self._out.put(
            {
                "type": "control_response",
                "response": {"subtype": "success", "request_id": request_id, "response": response},
            }
        )

    async def _emit_assistant(self, content: list[dict[str, Any]]) -> None:
        await self._out.put(self._message("assistant", content))

    def _message(self, role: str, content: list[dict[str, Any]]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": role, "content": content}
        if role == "assistant":
            message |= {"id": MESSAGE_ID, "model": "scripted"}
        return {"type": role, "message": message, "parent_tool_use_id": None, "session_id": self.session_id}


async def run_turn(cli: ScriptedCLI, options: ClaudeAgentOptions, prompt: str = "pay bob") -> ResultMessage:
    """Run the SDK's `query` over the scripted CLI to its result."""
    result = None
    async for message in query(prompt=prompt, options=options, transport=cli):
        if isinstance(message, ResultMessage):
            result = message
    assert result is not None, "the run gave no result"
    return result


def seen_rows(cli: ScriptedCLI) -> list[list[Any]]:
    return [seen.as_row() for seen in cli.seen]
