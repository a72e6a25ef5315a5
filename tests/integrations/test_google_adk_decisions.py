"""The Google ADK adapter with the real framework and a scripted model: each decision as the
model sees it next (word for word) and how many times each tool ran, in durable mode (paused,
resumed from ADK's SQLite session service, then resumed again from a stale copy of it) and in
waiting mode; locally and through a live server."""

from __future__ import annotations

import asyncio
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.adk")

from google.adk.sessions import InMemorySessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService

from signoff import Approve, Client, Edit, Gate, Reject, RequestStatus, Respond, RuleSet, Suspended
from signoff.integrations.google_adk import SIGNOFF_KEY, SignoffPlugin
from signoff.store import SQLiteStore
from tests.live import LiveServer

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

AGENT_USER = "pay-agent"
RULES = RuleSet.model_validate({"tools": {"transfer": {"requires_approval": True}}})
EDITED = {"amount": 7, "to": "carol"}

DECISIONS = [
    (Approve(), {"result": "sent 5 to bob"}, [TRANSFER]),
    (
        Edit(args=EDITED),
        {
            "note": "The parameters for tool 'transfer' were updated by the user to:\n"
            '{"amount": 7, "to": "carol"}',
            "result": "sent 7 to carol",
        },
        [EDITED],
    ),
    (
        Reject(message="not now"),
        {"error": "Tool execution for 'transfer' was rejected by the user. With user feedback: not now"},
        [],
    ),
    (Respond(message="use the card instead"), {"result": "use the card instead"}, []),
]
IDS = ["approve", "edit", "reject", "respond"]


@pytest.fixture(params=["local", "remote"])
def backend(request: pytest.FixtureRequest, sqlite_store: SQLiteStore) -> Iterator[Any]:
    """The gate's backend: the store, or a Client of a live server over it (an agent's token)."""
    if request.param == "local":
        yield sqlite_store
        return
    with (
        LiveServer(sqlite_store) as server,
        Client(server.url, server.user(AGENT_USER, role="agent")) as client,
    ):
        yield client


@pytest.mark.parametrize(("decision", "shown", "runs"), DECISIONS, ids=IDS)
def test_durable_pause_decide_resume_and_a_stale_session_runs_nothing_twice(
    tmp_path: Path, sqlite_store: SQLiteStore, backend: Any, decision: Any, shown: Any, runs: list[Any]
) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    plugin = SignoffPlugin(Gate(backend, rules=RULES))
    tools = make_tools(ledger)
    sessions = tmp_path / "sessions.db"
    runner = make_runner(Scripted(), tools, SqliteSessionService(str(sessions)), [plugin])

    async def start() -> tuple[str, list[Any]]:
        session = await runner.session_service.create_session(app_name=APP, user_id=USER_ID)
        return session.id, await run_text(runner, session.id)

    session_id, events = asyncio.run(start())
    (asked,) = paused_calls(events)
    assert asked.args is not None and asked.args["originalFunctionCall"]["id"] == "c0-1"
    (request,) = sqlite_store.list_requests(thread_id=session_id)
    assert asked.args["toolConfirmation"]["payload"][SIGNOFF_KEY]["request_id"] == request.id
    assert request.status is RequestStatus.PENDING and request.args == TRANSFER
    assert [row["tool"] for row in ledger.runs()] == ["lookup"]  # the ungated call ran in its turn
    stale = tmp_path / "stale.db"
    shutil.copy(sessions, stale)

    undecided = asyncio.run(plugin.resume(runner, user_id=USER_ID, session_id=session_id))
    assert undecided.paused and undecided.events == []
    assert [pending.request_id for pending in undecided.pending] == [request.id]
    assert len(ledger.runs()) == 1  # still undecided: nothing ran

    sqlite_store.decide(request.id, decision, actor="alice")
    for path in (sessions, stale):  # the second resume starts from the stale copy
        later = Scripted(turns=0)
        again = make_runner(later, tools, SqliteSessionService(str(path)), [plugin])
        resumed = asyncio.run(plugin.resume(again, user_id=USER_ID, session_id=session_id))
        assert not resumed.paused and final_text(resumed.events) == "done"
        assert later.seen == [("c0-1", shown), ("c0-2", {"result": "rows of t"})]
        assert [row["args"] for row in ledger.runs("transfer")] == runs
    assert len(ledger.runs("lookup")) == 1
    with pytest.raises(LookupError, match="has no call paused by signoff"):
        asyncio.run(plugin.resume(runner, user_id=USER_ID, session_id=session_id))


def test_a_confirmation_for_an_undecided_call_runs_nothing_and_resume_goes_on_later(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    """The decision is signoff's: confirming the call through ADK alone stops the run with
    nothing run; once decided, `resume` runs it on."""
    from google.genai import types

    ledger = Ledger(tmp_path / "ledger.jsonl")
    plugin = SignoffPlugin(Gate(sqlite_store, rules=RULES))
    model = Scripted()
    runner = make_runner(model, make_tools(ledger), InMemorySessionService(), [plugin])

    async def pause() -> tuple[str, Any]:
        session = await runner.session_service.create_session(app_name=APP, user_id=USER_ID)
        (asked,) = paused_calls(await run_text(runner, session.id))
        return session.id, asked

    async def confirm(session_id: str, asked: Any) -> None:
        payload = asked.args["toolConfirmation"]["payload"]
        response = types.FunctionResponse(
            id=asked.id, name=asked.name, response={"confirmed": True, "payload": payload}
        )
        message = types.Content(role="user", parts=[types.Part(function_response=response)])
        async for _ in runner.run_async(user_id=USER_ID, session_id=session_id, new_message=message):
            pass

    session_id, asked = asyncio.run(pause())
    with pytest.raises(RuntimeError, match="waiting for a decision") as stopped:
        asyncio.run(confirm(session_id, asked))  # ADK wraps a plugin's exception
    assert isinstance(stopped.value.__cause__, Suspended)
    assert ledger.runs("transfer") == []
    (request,) = sqlite_store.list_requests(thread_id=session_id)
    assert request.status is RequestStatus.PENDING

    sqlite_store.decide(request.id, Approve(), actor="alice")
    resumed = asyncio.run(plugin.resume(runner, user_id=USER_ID, session_id=session_id))
    assert final_text(resumed.events) == "done"
    assert model.seen == [("c0-1", {"result": "sent 5 to bob"}), ("c0-2", {"result": "rows of t"})]
    assert [row["args"] for row in ledger.runs("transfer")] == [TRANSFER]


@pytest.mark.parametrize(("decision", "shown", "runs"), DECISIONS, ids=IDS)
def test_waiting_mode_awaits_the_decision_inside_the_run(
    tmp_path: Path, sqlite_store: SQLiteStore, backend: Any, decision: Any, shown: Any, runs: list[Any]
) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    plugin = SignoffPlugin(Gate(backend, rules=RULES), wait=True)
    model = Scripted()
    runner = make_runner(model, make_tools(ledger), InMemorySessionService(), [plugin])

    async def scenario() -> list[Any]:
        session = await runner.session_service.create_session(app_name=APP, user_id=USER_ID)
        person = decide_when_asked(sqlite_store, session.id, decision)
        events = await run_text(runner, session.id)
        person.join()
        return events

    events = asyncio.run(scenario())
    assert final_text(events) == "done" and paused_calls(events) == []
    assert model.seen == [("c0-1", shown), ("c0-2", {"result": "rows of t"})]
    assert [row["args"] for row in ledger.runs("transfer")] == runs
    assert len(ledger.runs("lookup")) == 1


def test_tools_declared_require_confirmation_are_handed_to_signoff(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    """`gate_tools`: ADK's own flag names the tool as gated in signoff, and ADK asks no more."""
    ledger = Ledger(tmp_path / "ledger.jsonl")
    plugin = SignoffPlugin(Gate(sqlite_store))
    tools = plugin.gate_tools(make_tools(ledger, require_confirmation=True))
    runner = make_runner(Scripted(), tools, InMemorySessionService(), [plugin])

    async def start() -> tuple[str, list[Any]]:
        session = await runner.session_service.create_session(app_name=APP, user_id=USER_ID)
        return session.id, await run_text(runner, session.id)

    session_id, events = asyncio.run(start())
    (asked,) = paused_calls(events)
    assert asked.args is not None and SIGNOFF_KEY in asked.args["toolConfirmation"]["payload"]
    (request,) = sqlite_store.list_requests(thread_id=session_id)
    sqlite_store.decide(request.id, Approve(), actor="alice")
    resumed = asyncio.run(plugin.resume(runner, user_id=USER_ID, session_id=session_id))
    assert final_text(resumed.events) == "done"
    assert [row["args"] for row in ledger.runs("transfer")] == [TRANSFER]


def decide_when_asked(store: SQLiteStore, thread_id: str, decision: Any) -> threading.Thread:
    """A person in another thread: decides the transfer's request once it exists."""

    def person() -> None:
        while True:
            found = [r for r in store.list_requests(thread_id=thread_id) if r.tool_call_id == "c0-1"]
            if found:
                store.decide(found[0].id, decision, actor="alice")
                return
            time.sleep(0.01)

    thread = threading.Thread(target=person, daemon=True)
    thread.start()
    return thread


def test_two_gated_calls_of_one_turn_resume_together_once_both_are_decided(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    rules = RuleSet.model_validate(
        {"tools": {"transfer": {"requires_approval": True}, "lookup": {"requires_approval": True}}}
    )
    plugin = SignoffPlugin(Gate(sqlite_store, rules=rules))
    model = Scripted()
    runner = make_runner(model, make_tools(ledger), InMemorySessionService(), [plugin])

    async def start() -> tuple[str, list[Any]]:
        session = await runner.session_service.create_session(app_name=APP, user_id=USER_ID)
        return session.id, await run_text(runner, session.id)

    session_id, events = asyncio.run(start())
    assert len(paused_calls(events)) == 2 and ledger.runs() == []
    requests = {r.tool_call_id: r for r in sqlite_store.list_requests(thread_id=session_id)}
    assert requests["c0-1"].round == requests["c0-2"].round  # one model turn, one round
    sqlite_store.decide(requests["c0-1"].id, Approve(), actor="alice")
    half = asyncio.run(plugin.resume(runner, user_id=USER_ID, session_id=session_id))
    assert half.paused and [p.request_id for p in half.pending] == [requests["c0-2"].id]
    assert ledger.runs() == []  # nothing runs until every call of the pause is decided

    sqlite_store.decide(requests["c0-2"].id, Respond(message="no rows today"), actor="alice")
    resumed = asyncio.run(plugin.resume(runner, user_id=USER_ID, session_id=session_id))
    assert not resumed.paused and final_text(resumed.events) == "done"
    assert model.seen == [("c0-1", {"result": "sent 5 to bob"}), ("c0-2", {"result": "no rows today"})]
    assert [row["tool"] for row in ledger.runs()] == ["transfer"]
