"""The Agent Framework adapter with the real framework and a scripted chat client: each decision
as the model sees it next (word for word) and how many times each tool ran, in durable mode
(paused, the session saved with `to_dict` and read back, resumed, then resumed again from the
same stale session) and in waiting mode; locally and through a live server."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agent_framework")

from agent_framework import AgentSession

from signoff import Approve, Client, Edit, Gate, Reject, RequestStatus, Respond, RuleSet
from signoff.integrations.agent_framework import SIGNOFF_KEY, SignoffApprovals
from signoff.store import SQLiteStore
from tests.live import LiveServer

from .af_support import TRANSFER, USER, ScriptedClient, make_agent, make_tools
from .ledger import Ledger

AGENT_USER = "pay-agent"
RULES = RuleSet.model_validate({"tools": {"transfer": {"requires_approval": True}}})
EDITED = {"amount": 7, "to": "carol"}

DECISIONS = [
    (Approve(), "sent 5 to bob", [TRANSFER]),
    (
        Edit(args=EDITED),
        "The parameters for tool 'transfer' were updated by the user to:\n"
        '{"amount": 7, "to": "carol"}\n\nsent 7 to carol',
        [EDITED],
    ),
    (
        Reject(message="not now"),
        "Tool execution for 'transfer' was rejected by the user. With user feedback: not now",
        [],
    ),
    (Respond(message="use the card instead"), "use the card instead", []),
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
def test_durable_pause_decide_resume_and_a_stale_resume_runs_nothing_twice(
    tmp_path: Path, sqlite_store: SQLiteStore, backend: Any, decision: Any, shown: str, runs: list[Any]
) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    approvals = SignoffApprovals(Gate(backend, rules=RULES))
    tools = make_tools(ledger)
    client = ScriptedClient()
    agent = make_agent(client, tools, approvals.middleware)
    session = agent.create_session()

    paused = asyncio.run(agent.run(USER, session=session))
    (asked,) = paused.user_input_requests
    assert asked.type == "function_approval_request"
    assert asked.function_call is not None and asked.function_call.call_id == "c0-1"
    (request,) = sqlite_store.list_requests(thread_id=session.session_id)
    assert asked.additional_properties[SIGNOFF_KEY]["request_id"] == request.id
    assert request.status is RequestStatus.PENDING and request.args == TRANSFER
    assert [row["tool"] for row in ledger.runs()] == ["lookup"]  # the ungated call ran in its turn
    saved = json.dumps(session.to_dict())

    undecided = asyncio.run(approvals.resume(agent, AgentSession.from_dict(json.loads(saved))))
    assert undecided.paused and undecided.response is None
    assert [pending.request_id for pending in undecided.pending] == [request.id]
    assert len(ledger.runs()) == 1  # still undecided: nothing ran

    sqlite_store.decide(request.id, decision, actor="alice")
    for _ in range(2):  # the second resume starts from the same, stale, saved session
        later = ScriptedClient(turns=0)
        ended = AgentSession.from_dict(json.loads(saved))
        resumed = asyncio.run(approvals.resume(make_agent(later, tools, approvals.middleware), ended))
        assert not resumed.paused and resumed.response is not None and resumed.response.text == "done"
        assert later.seen == [("c0-2", "rows of t"), ("c0-1", shown)]
        assert [row["args"] for row in ledger.runs("transfer")] == runs
    assert len(ledger.runs("lookup")) == 1
    with pytest.raises(LookupError, match="has no call paused by signoff"):
        asyncio.run(approvals.resume(agent, ended))  # the session as its run ended: nothing paused


def test_an_approval_response_for_an_undecided_call_pauses_it_again(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    """The decision is signoff's: approving the call through Agent Framework alone runs nothing."""
    ledger = Ledger(tmp_path / "ledger.jsonl")
    approvals = SignoffApprovals(Gate(sqlite_store, rules=RULES))
    agent = make_agent(ScriptedClient(), make_tools(ledger), approvals.middleware)
    session = agent.create_session()
    (asked,) = asyncio.run(agent.run(USER, session=session)).user_input_requests

    from agent_framework import Message

    again = asyncio.run(
        agent.run(Message(role="user", contents=[asked.to_function_approval_response(True)]), session=session)
    )
    (still,) = again.user_input_requests
    assert still.function_call is not None and still.function_call.call_id == "c0-1"
    assert ledger.runs("transfer") == []
    (request,) = sqlite_store.list_requests(thread_id=session.session_id)
    assert request.status is RequestStatus.PENDING


@pytest.mark.parametrize(("decision", "shown", "runs"), DECISIONS, ids=IDS)
def test_waiting_mode_awaits_the_decision_inside_the_run(
    tmp_path: Path, sqlite_store: SQLiteStore, backend: Any, decision: Any, shown: str, runs: list[Any]
) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    approvals = SignoffApprovals(Gate(backend, rules=RULES), wait=True)
    client = ScriptedClient()
    agent = make_agent(client, make_tools(ledger), approvals.middleware)
    session = agent.create_session()
    person = decide_when_asked(sqlite_store, session.session_id, decision)

    response = asyncio.run(agent.run(USER, session=session))
    person.join()
    assert response.text == "done" and not response.user_input_requests
    assert client.seen == [("c0-1", shown), ("c0-2", "rows of t")]
    assert [row["args"] for row in ledger.runs("transfer")] == runs
    assert len(ledger.runs("lookup")) == 1


def test_waiting_mode_without_a_session_gets_a_thread_of_its_own(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    approvals = SignoffApprovals(Gate(sqlite_store, rules=RULES), wait=True)
    client = ScriptedClient()
    agent = make_agent(client, make_tools(ledger), approvals.middleware)
    person = decide_when_asked(sqlite_store, None, Approve())
    assert asyncio.run(agent.run(USER)).text == "done"
    person.join()
    (request,) = sqlite_store.list_requests()
    assert request.thread_id.startswith("maf-") and request.status is RequestStatus.APPROVED
    assert client.seen == [("c0-1", "sent 5 to bob"), ("c0-2", "rows of t")]


def test_durable_mode_without_a_session_refuses_and_runs_nothing(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    from agent_framework import MiddlewareFailure

    ledger = Ledger(tmp_path / "ledger.jsonl")
    approvals = SignoffApprovals(Gate(sqlite_store, rules=RULES))
    agent = make_agent(ScriptedClient(), make_tools(ledger), approvals.middleware)
    with pytest.raises(MiddlewareFailure, match="resumes only through a session"):
        asyncio.run(agent.run(USER))
    assert ledger.runs("transfer") == []
    assert sqlite_store.list_requests() == []


def decide_when_asked(store: SQLiteStore, thread_id: str | None, decision: Any) -> threading.Thread:
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
