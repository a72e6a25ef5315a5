"""The Strands adapter with the real framework and a scripted model: each decision as the model
sees it next (word for word) and how many times each tool ran, in durable mode (paused, resumed
from a FileSessionManager's session, then resumed again from a stale copy of it) and in waiting
mode (`agent()` and `invoke_async`); locally and through a live server."""

from __future__ import annotations

import asyncio
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("strands", reason="strands-agents pins mcp<2.2: tested in the second venv (.venv-compat)")

from strands.session import FileSessionManager

from signoff import Approve, Client, Edit, Gate, Reject, RequestStatus, Respond, RuleSet
from signoff.integrations.strands import SIGNOFF_KEY, SignoffHooks
from signoff.store import SQLiteStore
from tests.integrations.ledger import Ledger
from tests.live import LiveServer

from .strands_support import TRANSFER, USER, Scripted, final_text, make_agent, make_tools

AGENT_USER = "pay-agent"
RULES = RuleSet.model_validate({"tools": {"transfer": {"requires_approval": True}}})
EDITED = {"amount": 7, "to": "carol"}
LOOKUP_SEEN = ("c0-2", "success", ["rows of t"])

DECISIONS = [
    (Approve(), ("success", ["sent 5 to bob"]), [TRANSFER]),
    (
        Edit(args=EDITED),
        (
            "success",
            [
                "The parameters for tool 'transfer' were updated by the user to:\n"
                '{"amount": 7, "to": "carol"}',
                "sent 7 to carol",
            ],
        ),
        [EDITED],
    ),
    (
        Reject(message="not now"),
        ("error", ["Tool execution for 'transfer' was rejected by the user. With user feedback: not now"]),
        [],
    ),
    (Respond(message="use the card instead"), ("success", ["use the card instead"]), []),
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


def session(folder: Path) -> FileSessionManager:
    return FileSessionManager(session_id="s1", storage_dir=str(folder))


@pytest.mark.parametrize(("decision", "shown", "runs"), DECISIONS, ids=IDS)
def test_durable_pause_decide_resume_and_a_stale_session_runs_nothing_twice(
    tmp_path: Path, sqlite_store: SQLiteStore, backend: Any, decision: Any, shown: Any, runs: list[Any]
) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    hooks = SignoffHooks(Gate(backend, rules=RULES))
    sessions = tmp_path / "sessions"
    agent = make_agent(Scripted(), make_tools(ledger), [hooks], session_manager=session(sessions))

    result = agent(USER)
    assert result.stop_reason == "interrupt"
    (asked,) = result.interrupts
    (request,) = sqlite_store.list_requests(thread_id="s1")
    assert asked.name == "signoff" and asked.reason[SIGNOFF_KEY]["request_id"] == request.id
    assert asked.reason[SIGNOFF_KEY]["tool_use_id"] == "c0-1"
    assert request.status is RequestStatus.PENDING and request.args == TRANSFER
    assert [row["tool"] for row in ledger.runs()] == ["lookup"]  # the ungated call ran in its turn
    stale = tmp_path / "stale"
    shutil.copytree(sessions, stale)

    undecided = hooks.resume(agent)
    assert undecided.paused and undecided.result is None
    assert [pending.request_id for pending in undecided.pending] == [request.id]
    assert len(ledger.runs()) == 1  # still undecided: nothing ran

    sqlite_store.decide(request.id, decision, actor="alice")
    for folder in (sessions, stale):  # the second resume starts from the stale copy
        later = Scripted(turns=0)
        again = make_agent(later, make_tools(ledger), [hooks], session_manager=session(folder))
        resumed = hooks.resume(again)
        assert not resumed.paused and final_text(resumed.result) == "done"
        assert later.seen == [LOOKUP_SEEN, ("c0-1", *shown)]
        assert [row["args"] for row in ledger.runs("transfer")] == runs
    assert len(ledger.runs("lookup")) == 1
    with pytest.raises(LookupError, match="has no call paused by signoff"):
        hooks.resume(again)


def test_a_response_for_an_undecided_call_pauses_it_again_and_runs_nothing(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    """The decision is signoff's: answering the interrupt through Strands alone pauses the call
    again (`signoff#2`), nothing run; once decided, `resume` runs it on."""
    ledger = Ledger(tmp_path / "ledger.jsonl")
    hooks = SignoffHooks(Gate(sqlite_store, rules=RULES))
    model = Scripted()
    agent = make_agent(model, make_tools(ledger), [hooks])
    (asked,) = agent(USER).interrupts

    again = agent([{"interruptResponse": {"interruptId": asked.id, "response": "y"}}])
    assert again.stop_reason == "interrupt"
    assert [(i.name, i.reason) for i in again.interrupts] == [("signoff#2", asked.reason)]
    assert ledger.runs("transfer") == []
    (request,) = sqlite_store.list_requests()
    assert request.status is RequestStatus.PENDING

    sqlite_store.decide(request.id, Approve(), actor="alice")
    resumed = hooks.resume(agent)
    assert final_text(resumed.result) == "done"
    assert model.seen == [LOOKUP_SEEN, ("c0-1", "success", ["sent 5 to bob"])]
    assert [row["args"] for row in ledger.runs("transfer")] == [TRANSFER]


@pytest.mark.parametrize(("decision", "shown", "runs"), DECISIONS, ids=IDS)
@pytest.mark.parametrize("invoke", ["sync", "async"])
def test_waiting_mode_waits_for_the_decision_inside_the_run(
    tmp_path: Path,
    sqlite_store: SQLiteStore,
    backend: Any,
    invoke: str,
    decision: Any,
    shown: Any,
    runs: list[Any],
) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    hooks = SignoffHooks(Gate(backend, rules=RULES), wait=True)
    model = Scripted()
    agent = make_agent(model, make_tools(ledger), [hooks])
    person = decide_when_asked(sqlite_store, decision)
    result = agent(USER) if invoke == "sync" else asyncio.run(agent.invoke_async(USER))
    person.join()
    assert result.stop_reason == "end_turn" and final_text(result) == "done"
    assert sorted(model.seen) == sorted([LOOKUP_SEEN, ("c0-1", *shown)])
    assert [row["args"] for row in ledger.runs("transfer")] == runs
    assert len(ledger.runs("lookup")) == 1


def decide_when_asked(store: SQLiteStore, decision: Any) -> threading.Thread:
    """A person in another thread: decides the transfer's request once it exists."""

    def person() -> None:
        while True:
            found = [r for r in store.list_requests() if r.tool_call_id == "c0-1"]
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
    hooks = SignoffHooks(Gate(sqlite_store, rules=rules))
    model = Scripted()
    agent = make_agent(model, make_tools(ledger), [hooks])
    paused = agent(USER)
    assert len(paused.interrupts) == 2 and ledger.runs() == []
    requests = {r.tool_call_id: r for r in sqlite_store.list_requests()}
    assert requests["c0-1"].round == requests["c0-2"].round  # one model turn, one round
    sqlite_store.decide(requests["c0-1"].id, Approve(), actor="alice")
    half = hooks.resume(agent)
    assert half.paused and [p.request_id for p in half.pending] == [requests["c0-2"].id]
    assert ledger.runs() == []  # nothing runs until every call of the pause is decided

    sqlite_store.decide(requests["c0-2"].id, Respond(message="no rows today"), actor="alice")
    resumed = hooks.resume(agent)
    assert not resumed.paused and final_text(resumed.result) == "done"
    assert sorted(model.seen) == [
        ("c0-1", "success", ["sent 5 to bob"]),
        ("c0-2", "success", ["no rows today"]),
    ]
    assert [row["tool"] for row in ledger.runs()] == ["transfer"]


def test_an_async_run_pauses_and_aresume_runs_it_on(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    hooks = SignoffHooks(Gate(sqlite_store, rules=RULES))
    model = Scripted()
    agent = make_agent(model, make_tools(ledger), [hooks], session_manager=session(tmp_path / "sessions"))
    paused = asyncio.run(agent.invoke_async(USER))
    assert paused.stop_reason == "interrupt"
    still = asyncio.run(hooks.aresume(agent))
    assert still.paused and still.result is None and ledger.runs("transfer") == []
    (request,) = sqlite_store.list_requests()
    sqlite_store.decide(request.id, Edit(args=EDITED), actor="alice")
    resumed = asyncio.run(hooks.aresume(agent))
    assert not resumed.paused and final_text(resumed.result) == "done"
    assert [row["args"] for row in ledger.runs("transfer")] == [EDITED]


def test_a_paused_call_keeps_its_decision_when_its_rule_is_switched_off_meanwhile(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    """The call was asked about: it goes on as decided (rejected), though the rules in force when
    it resumes ask about no call of the tool."""
    ledger = Ledger(tmp_path / "ledger.jsonl")
    sessions = session(tmp_path / "sessions")
    make_agent(
        Scripted(),
        make_tools(ledger),
        [SignoffHooks(Gate(sqlite_store, rules=RULES))],
        session_manager=sessions,
    )(USER)
    (request,) = sqlite_store.list_requests()
    sqlite_store.decide(request.id, Reject(message="not now"), actor="alice")

    relaxed = SignoffHooks(Gate(sqlite_store, rules=RuleSet()))
    assert relaxed.gate.asks_nowhere("transfer")
    later = Scripted(turns=0)
    again = make_agent(later, make_tools(ledger), [relaxed], session_manager=session(tmp_path / "sessions"))
    resumed = relaxed.resume(again)
    assert final_text(resumed.result) == "done" and ledger.runs("transfer") == []
    assert later.seen == [LOOKUP_SEEN, ("c0-1", *DECISIONS[2][1])]
