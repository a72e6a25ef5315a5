"""A Claude Agent SDK agent whose email tool needs a person's approval, through signoff.

    pip install 'signoff[claude-agent-sdk]'
    python examples/claude_agent_sdk_agent.py     # runs offline: a scripted CLI, a local store

The agent's tools are in-process (`@tool`, `create_sdk_mcp_server`), and both are in
`allowed_tools`, so Claude Code would run them without asking. signoff's PreToolUse hook makes it
ask about `send_email` (its rules say so), and signoff's `can_use_tool` waits for the decision
inside the run. A person edits the email, here in code; in real life from the inbox
(`signoff serve`), the CLI (`signoff edit ID ...`) or a chat card, from any process. The tool runs
once with the edited input, and the model is told the input was changed. The same session asking
about the call again (a resumed session) runs nothing twice.

No model and no Claude Code CLI run here: `ScriptedClaudeCode` plays the CLI's side of the SDK's
control protocol (the SDK's public `transport=` parameter), as a model asking for both tools would.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from claude_agent_sdk import CanUseToolShadowedWarning, ResultMessage, create_sdk_mcp_server, query, tool
from claude_agent_sdk._internal.transport import Transport

import signoff
from signoff.integrations.claude_agent_sdk import SignoffPermissions

# the SDK warns that allowed_tools skip can_use_tool; signoff's PreToolUse hook makes the CLI ask anyway
warnings.filterwarnings("ignore", category=CanUseToolShadowedWarning)

sent: list[str] = []


@tool("send_email", "Send an email.", {"to": str, "body": str})
async def send_email(args: dict[str, Any]) -> dict[str, Any]:
    sent.append(args["to"])
    return {"content": [{"type": "text", "text": f"sent to {args['to']}"}]}


@tool("read_inbox", "Read the inbox.", {})
async def read_inbox(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "1 new message from alice: lunch?"}]}


MAIL = create_sdk_mcp_server("mail", tools=[read_inbox, send_email])
CALLS = [
    ("toolu_1", "mcp__mail__read_inbox", {}),
    ("toolu_2", "mcp__mail__send_email", {"to": "alice", "body": "yes"}),
]


class ScriptedClaudeCode(Transport):
    """Claude Code's side of the control protocol for one model turn asking for `CALLS`: each
    call's PreToolUse hooks, then `can_use_tool` if a hook asks, the tool through the SDK's MCP
    server, the PostToolUse hooks; prints what the model is given."""

    def __init__(self) -> None:
        self.out: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.hooks: dict[str, list[str]] = {}
        self.ids = itertools.count()
        self.turn: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        return None

    def is_ready(self) -> bool:
        return True

    async def close(self) -> None:
        return None

    async def end_input(self) -> None:
        await self.out.put(None)

    async def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        while (message := await self.out.get()) is not None:
            yield message

    async def write(self, data: str) -> None:
        message = json.loads(data)
        if message["type"] == "control_request":  # initialize: the hooks' callback ids
            for event, matchers in (message["request"].get("hooks") or {}).items():
                self.hooks[event] = [hook for matcher in matchers for hook in matcher["hookCallbackIds"]]
            reply = {"subtype": "success", "request_id": message["request_id"], "response": {}}
            await self.out.put({"type": "control_response", "response": reply})
        elif message["type"] == "user" and self.turn is None:
            self.turn = asyncio.create_task(self.model_turn())
        elif message["type"] == "control_response":
            answer = message["response"]
            self.waiting.pop(answer["request_id"]).set_result(answer.get("response") or {})

    async def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        request_id = f"cli-{next(self.ids)}"
        self.waiting[request_id] = asyncio.get_running_loop().create_future()
        await self.out.put({"type": "control_request", "request_id": request_id, "request": request})
        return await self.waiting[request_id]

    async def hook(self, event: str, call_id: str, name: str, given: dict[str, Any]) -> list[dict[str, Any]]:
        hook_input = {"session_id": "session-1", "transcript_path": "", "cwd": ".", "hook_event_name": event}
        hook_input |= {"tool_name": name, "tool_input": given, "tool_use_id": call_id}
        return [
            (await self.ask({"subtype": "hook_callback", "callback_id": hook_id, "input": hook_input})).get(
                "hookSpecificOutput", {}
            )
            for hook_id in self.hooks.get(event, [])
        ]

    async def mcp(self, method: str, params: dict[str, Any], *, notify: bool = False) -> dict[str, Any]:
        rpc: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            rpc["id"] = next(self.ids)
        answer = await self.ask({"subtype": "mcp_message", "server_name": "mail", "message": rpc})
        return dict(answer["mcp_response"].get("result") or {})

    async def model_turn(self) -> None:
        hello = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "cli", "version": "0"},
        }
        await self.mcp("initialize", hello)  # the CLI's MCP client starts the session first
        await self.mcp("notifications/initialized", {}, notify=True)
        for call_id, name, given in CALLS:  # both in allowed_tools: the CLI asks only if a hook does
            hooked = await self.hook("PreToolUse", call_id, name, given)
            if any(out.get("permissionDecision") == "ask" for out in hooked):
                request = {
                    "subtype": "can_use_tool",
                    "tool_name": name,
                    "input": given,
                    "tool_use_id": call_id,
                }
                answer = await self.ask(request)
                if answer["behavior"] == "deny":
                    print(f"model sees ({call_id}): denied: {answer['message']}")
                    continue
                given = answer["updatedInput"]
            result = await self.mcp("tools/call", {"name": name.split("__")[2], "arguments": given})
            text = result["content"][0]["text"]
            notes = [
                out["additionalContext"]
                for out in await self.hook("PostToolUse", call_id, name, given)
                if out
            ]
            print(f"model sees ({call_id}): {text}" + "".join(f" [{note}]" for note in notes))
        summary = {"duration_ms": 1, "duration_api_ms": 0, "is_error": False, "num_turns": 1}
        await self.out.put({"type": "result", "subtype": "success", "session_id": "session-1", **summary})


def person_edits(store: Any) -> None:
    """A person at the inbox: waits for the request, then edits the email."""
    while not (pending := store.list_requests(status="pending")):
        time.sleep(0.05)
    (request,) = pending
    print(f"asked: {request.tool_name} waits for a person (request {request.id})")
    store.decide(request.id, signoff.Edit(args={"to": "alice", "body": "yes, at noon"}), actor="alice")


async def one_turn(permissions: SignoffPermissions) -> None:
    options = permissions.options(mcp_servers={"mail": MAIL}, allowed_tools=[name for _, name, _ in CALLS])
    async for message in query(prompt="Answer Alice.", options=options, transport=ScriptedClaudeCode()):
        if isinstance(message, ResultMessage):
            print(f"turn ended: {message.subtype}")


def main(path: Path) -> None:
    store = signoff.open_store(str(path))
    rules = {"tools": {"mcp__mail__send_email": {"requires_approval": True}}}
    permissions = SignoffPermissions(signoff.Gate(store, rules=signoff.RuleSet.model_validate(rules)))
    person = threading.Thread(target=person_edits, args=(store,), daemon=True)
    person.start()
    asyncio.run(one_turn(permissions))
    person.join()
    asyncio.run(one_turn(permissions))  # the same session asks again: nothing runs twice
    (request,) = store.list_requests()
    print(f"send_email ran {len(sent)} time(s), for request {request.id}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "signoff.db")
