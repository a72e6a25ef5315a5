"""A Google ADK agent whose email tool needs a person's approval, through signoff.

    pip install 'signoff[google-adk]'
    python examples/google_adk_agent.py           # runs offline: a scripted model, a local store

The agent asks to read the inbox and to send an email. Reading needs nobody and runs at once; the
email becomes a signoff request and the run pauses with ADK's own confirmation request
(`adk_request_confirmation`). The session is kept by ADK's SQLite session service (the process
could exit here). A person approves with an edit, in code; in real life from the inbox
(`signoff serve`), the CLI (`signoff edit ID ...`) or a chat card, from any process. The run is
resumed from the session service: the tool runs once with the edited args, and the model is told
the args were changed. Resuming a stale copy of the session again runs nothing twice.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types

import signoff
from signoff.integrations.google_adk import SIGNOFF_KEY, SignoffPlugin

sent: list[tuple[str, str | None]] = []


def send_email(to: str, body: str) -> str:
    """Send an email."""
    sent.append((to, signoff.idempotency_key()))  # pass the key on to an API that deduplicates
    return f"sent to {to}"


def read_inbox() -> str:
    """Read the inbox."""
    return "1 new message from alice: lunch?"


class ScriptedModel(BaseLlm):
    """Asks for both tools first, then reports what the tools said."""

    model: str = "scripted"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1].parts or []
        if not any(part.function_response for part in last):
            calls = [
                types.FunctionCall(id="call-1", name="read_inbox", args={}),
                types.FunctionCall(id="call-2", name="send_email", args={"to": "alice", "body": "yes"}),
            ]
            parts = [types.Part(function_call=call) for call in calls]
        else:
            for part in last:
                if part.function_response:
                    print(f"model sees ({part.function_response.id}): {part.function_response.response}")
            parts = [types.Part(text="Replied to Alice.")]
        yield LlmResponse(content=types.Content(role="model", parts=parts))


def runner_over(sessions: Path, plugin: SignoffPlugin) -> Runner:
    agent = LlmAgent(name="mailer", model=ScriptedModel(), tools=[send_email, read_inbox])
    app = App(name="mail", root_agent=agent, plugins=[plugin])
    return Runner(app=app, session_service=SqliteSessionService(str(sessions)))


async def main(folder: Path) -> None:
    store = signoff.open_store(str(folder / "signoff.db"))
    rules = signoff.RuleSet(tools={"send_email": signoff.ToolEntry(requires_approval=True)})
    plugin = SignoffPlugin(signoff.Gate(store, rules=rules), agent="mailer")
    runner = runner_over(folder / "sessions.db", plugin)

    session = await runner.session_service.create_session(app_name="mail", user_id="u1")
    message = types.Content(role="user", parts=[types.Part(text="Answer Alice")])
    events = [e async for e in runner.run_async(user_id="u1", session_id=session.id, new_message=message)]
    (asked,) = [c for e in events for c in e.get_function_calls() if c.name == "adk_request_confirmation"]
    args: dict[str, Any] = asked.args or {}
    waiting = args["toolConfirmation"]["payload"][SIGNOFF_KEY]
    print(f"paused: {args['originalFunctionCall']['name']} needs approval")
    print(f"request {waiting['request_id']} waits for a person")
    shutil.copy(folder / "sessions.db", folder / "stale.db")  # the process may exit now

    store.decide(
        waiting["request_id"], signoff.Edit(args={"to": "alice", "body": "yes, at noon"}), actor="alice"
    )

    resumed = await plugin.resume(runner, user_id="u1", session_id=session.id)
    texts = [p.text for e in resumed.events if e.content for p in e.content.parts or [] if p.text]
    print(f"ai: {texts[-1]}")
    stale = runner_over(folder / "stale.db", plugin)
    await plugin.resume(stale, user_id="u1", session_id=session.id)  # again: runs nothing
    print(f"send_email ran {len(sent)} time(s), idempotency key {sent[0][1]}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        asyncio.run(main(Path(sys.argv[1]).parent))
    else:
        with tempfile.TemporaryDirectory() as folder:
            asyncio.run(main(Path(folder)))
