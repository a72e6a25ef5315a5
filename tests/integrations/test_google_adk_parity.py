"""ADK's own confirmation (`FunctionTool(require_confirmation=True)`) and signoff's plugin on the
same script: what the model sees for approve and reject, and what only signoff carries (the
reason of a rejection; edit and respond)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from signoff import Approve, Gate, Reject, RuleSet
from signoff.integrations.google_adk import SignoffPlugin
from signoff.store import SQLiteStore

from .adk_support import (
    APP,
    TRANSFER,
    USER_ID,
    Scripted,
    final_text,
    make_runner,
    make_tools,
    paused_calls,
    run_text,
)
from .ledger import Ledger

RULES = RuleSet.model_validate({"tools": {"transfer": {"requires_approval": True}}})


def confirm(runner: Runner, session_id: str, asked: types.FunctionCall, confirmed: bool) -> list[Any]:
    """ADK's own answer to its confirmation request, as its docs show it."""
    response = types.FunctionResponse(id=asked.id, name=asked.name, response={"confirmed": confirmed})
    message = types.Content(role="user", parts=[types.Part(function_response=response)])

    async def run() -> list[Any]:
        return [
            e async for e in runner.run_async(user_id=USER_ID, session_id=session_id, new_message=message)
        ]

    return asyncio.run(run())


def start(runner: Runner) -> tuple[str, types.FunctionCall]:
    async def run() -> tuple[str, types.FunctionCall]:
        session = await runner.session_service.create_session(app_name=APP, user_id=USER_ID)
        (asked,) = paused_calls(await run_text(runner, session.id))
        return session.id, asked

    return asyncio.run(run())


@pytest.mark.parametrize("approved", [True, False], ids=["approve", "reject"])
def test_adk_own_confirmation_and_signoff_show_the_model_the_same_shapes(
    tmp_path: Path, sqlite_store: SQLiteStore, approved: bool
) -> None:
    own_ledger = Ledger(tmp_path / "own")
    own_model = Scripted()
    own = make_runner(
        own_model, make_tools(own_ledger, require_confirmation=True), InMemorySessionService(), []
    )
    session_id, asked = start(own)
    assert final_text(confirm(own, session_id, asked, approved)) == "done"

    ours_ledger = Ledger(tmp_path / "ours")
    ours_model = Scripted()
    plugin = SignoffPlugin(Gate(sqlite_store, rules=RULES))
    ours = make_runner(ours_model, make_tools(ours_ledger), InMemorySessionService(), [plugin])
    session_id, _ = start(ours)
    (request,) = sqlite_store.list_requests(thread_id=session_id)
    sqlite_store.decide(request.id, Approve() if approved else Reject(message="not now"), actor="alice")
    resumed = asyncio.run(plugin.resume(ours, user_id=USER_ID, session_id=session_id))
    assert final_text(resumed.events) == "done"

    lookup = ("c0-2", {"result": "rows of t"})
    if approved:
        assert own_model.seen == ours_model.seen == [("c0-1", {"result": "sent 5 to bob"}), lookup]
        ran = [[row["args"] for row in ledger.runs("transfer")] for ledger in (own_ledger, ours_ledger)]
        assert ran == [[TRANSFER], [TRANSFER]]
    else:
        assert own_model.seen == [("c0-1", {"error": "This tool call is rejected."}), lookup]
        reason = "Tool execution for 'transfer' was rejected by the user. With user feedback: not now"
        assert ours_model.seen == [("c0-1", {"error": reason}), lookup]  # the same key, with the reason
        assert own_ledger.runs("transfer") == ours_ledger.runs("transfer") == []


def test_waiting_mode_under_the_blocking_runner(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    """`Runner.run` (ADK's blocking form, on a thread of its own) waits for the decision too."""
    import threading

    ledger = Ledger(tmp_path / "ledger")
    plugin = SignoffPlugin(Gate(sqlite_store, rules=RULES), wait=True)
    model = Scripted()
    runner = make_runner(model, make_tools(ledger), InMemorySessionService(), [plugin])
    session = asyncio.run(runner.session_service.create_session(app_name=APP, user_id=USER_ID))

    def person() -> None:
        while not (found := sqlite_store.list_requests(thread_id=session.id)):
            threading.Event().wait(0.01)
        sqlite_store.decide(found[0].id, Approve(), actor="alice")

    deciding = threading.Thread(target=person, daemon=True)
    deciding.start()
    message = types.Content(role="user", parts=[types.Part(text="pay bob")])
    events = list(runner.run(user_id=USER_ID, session_id=session.id, new_message=message))
    deciding.join()
    assert final_text(events) == "done"
    assert model.seen == [("c0-1", {"result": "sent 5 to bob"}), ("c0-2", {"result": "rows of t"})]
    assert [row["args"] for row in ledger.runs("transfer")] == [TRANSFER]


def test_a_confirmation_sent_as_adk_docs_show_it_applies_signoffs_decision(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    """A client that answers with ADK's bare `{"confirmed": true}` (no payload) still gets
    signoff's decision: here a rejection, whatever the response says."""
    ledger = Ledger(tmp_path / "ledger")
    model = Scripted()
    plugin = SignoffPlugin(Gate(sqlite_store, rules=RULES))
    runner = make_runner(model, make_tools(ledger), InMemorySessionService(), [plugin])
    session_id, asked = start(runner)
    (request,) = sqlite_store.list_requests(thread_id=session_id)
    sqlite_store.decide(request.id, Reject(message="not now"), actor="alice")
    assert final_text(confirm(runner, session_id, asked, True)) == "done"
    reason = "Tool execution for 'transfer' was rejected by the user. With user feedback: not now"
    assert model.seen == [("c0-1", {"error": reason}), ("c0-2", {"result": "rows of t"})]
    assert ledger.runs("transfer") == []
