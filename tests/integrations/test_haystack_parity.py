"""signoff's Haystack adapters give the model exactly what Haystack's own BlockingConfirmationStrategy
gives it for the same decisions (run with a scripted ConfirmationUI), and run each tool at most once:
SignoffConfirmationStrategy (waiting, sync and async), SignoffConfirmationUI under Haystack's own
strategy, SignoffConfirmationStrategy under SignoffConfirmationHook (the run kept while it waits), and
the durable pause + resume. Each runs with the gate over the store itself and over a
live `signoff serve` (a `Client` with an agent's token; the person then decides through the API as an
approver)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("haystack")

from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage
from haystack.hooks.human_in_the_loop import (
    AlwaysAskPolicy,
    BlockingConfirmationStrategy,
    ConfirmationHook,
    ConfirmationUIResult,
)

from signoff import Approve, Backend, Client, Decision, Edit, Gate, Reject, Request, Respond, RuleSet
from signoff.integrations.haystack import (
    AWAITING_APPROVAL,
    SignoffConfirmationHook,
    SignoffConfirmationStrategy,
    SignoffConfirmationUI,
    SignoffPauseHook,
    resume,
    resume_async,
)
from signoff.store import SQLiteStore

from ..live import LiveServer
from .hs_support import Ledger, Script, calls, make_tools, shown

EMAIL = {"to": "alice", "body": "hi"}
RULES = RuleSet.model_validate({"tools": {"send_email": {"requires_approval": True}}})
CONTEXT: dict[str, Any] = {"signoff": {"thread_id": "t1"}}
USER = [ChatMessage.from_user("mail alice")]
AGENT = "haystack-agent"
"""The agent's user when the gate talks to a live server."""

# (Haystack's UI result, signoff's decision, how many times send_email runs)
DECISIONS: dict[str, tuple[ConfirmationUIResult, Decision, int]] = {
    "approve": (ConfirmationUIResult(action="confirm"), Approve(), 1),
    "modify": (
        ConfirmationUIResult(action="modify", new_tool_params={"to": "bob", "body": "hi"}),
        Edit(args={"to": "bob", "body": "hi"}),
        1,
    ),
    "modify with feedback": (
        ConfirmationUIResult(
            action="modify", new_tool_params={"to": "bob", "body": "hi"}, feedback="bob, not alice"
        ),
        Edit(args={"to": "bob", "body": "hi"}, comment="bob, not alice"),
        1,
    ),
    "reject with feedback": (
        ConfirmationUIResult(action="reject", feedback="not now"),
        Reject(message="not now"),
        0,
    ),
    "reject": (ConfirmationUIResult(action="reject"), Reject(), 0),
    "respond": (
        ConfirmationUIResult(action="reject", feedback="Alice is on leave"),
        Respond(message="Alice is on leave"),
        0,
    ),
}


@pytest.fixture(params=["local", "remote"])
def backend(request: pytest.FixtureRequest, sqlite_store: SQLiteStore) -> Iterator[Backend]:
    """What the gate runs over: the store, or a live server over it (an agent's token)."""
    if request.param == "local":
        yield sqlite_store
        return
    server: LiveServer = request.getfixturevalue("sqlite_server")
    with Client(server.url, server.user(AGENT, role="agent")) as client:
        yield client


@pytest.fixture
def person(request: pytest.FixtureRequest, backend: Backend, sqlite_store: SQLiteStore) -> Iterator[Backend]:
    """Where alice decides: on the store, or (remote) through the server's API with her own token."""
    if not isinstance(backend, Client):
        yield sqlite_store
        return
    server: LiveServer = request.getfixturevalue("sqlite_server")
    with Client(server.url, server.user("alice", role="member")) as client:
        yield client


def request_of(store: SQLiteStore, backend: Backend) -> Request | None:
    """The gate's request for the model's call c1 on thread t1 (a server records its agent user)."""
    if isinstance(backend, Client):
        return store.find_request("t1", "c1", created_by=AGENT)
    return store.find_request("t1", "c1")


class ScriptedUI:
    """Haystack's ConfirmationUI protocol, answering from a script."""

    def __init__(self, result: ConfirmationUIResult) -> None:
        self.result = result

    def get_user_confirmation(
        self, tool_name: str, tool_description: str, tool_params: dict[str, Any]
    ) -> Any:
        return self.result

    def to_dict(self) -> dict[str, Any]:
        return {"type": "ScriptedUI", "init_parameters": {}}


def one_call() -> Script:
    return Script(calls(("send_email", EMAIL, "c1")), "done")


def agent_with(script: Script, ledger: Ledger, hook: Any) -> Agent:
    return Agent(chat_generator=script.generator(), tools=make_tools(ledger), hooks={"before_tool": [hook]})


def haystack_run(tmp_path: Path, result: ConfirmationUIResult) -> tuple[Script, Ledger]:
    ledger = Ledger(tmp_path / "haystack.jsonl")
    script = one_call()
    strategy = BlockingConfirmationStrategy(
        confirmation_policy=AlwaysAskPolicy(), confirmation_ui=ScriptedUI(result)
    )
    agent_with(script, ledger, ConfirmationHook(confirmation_strategies={"send_email": strategy})).run(USER)
    return script, ledger


def haystack_expected(tmp_path: Path, name: str) -> tuple[list[dict[str, Any]], int]:
    result, _, runs = DECISIONS[name]
    script, ledger = haystack_run(tmp_path, result)
    assert len(script.seen) == 2 and len(ledger.runs("send_email")) == runs
    return shown(script.seen[1]), runs


def answered_expected(tmp_path: Path, name: str) -> tuple[list[dict[str, Any]], int]:
    """What the strategy and the durable pause give: Haystack's history, except that an answer in
    the tool's place (respond, which Haystack lacks) is the tool's result itself, not a rejection
    text around it (the UI, under Haystack's strategy, can only report it as a rejection)."""
    expected, runs = haystack_expected(tmp_path, name)
    if name == "respond":
        assert expected[2]["result"][0].endswith("With user feedback: Alice is on leave")
        expected[2]["result"] = ("Alice is on leave", "c1", True)
    return expected, runs


def decide_when_asked(
    person: Backend,
    decision: Decision,
    *,
    thread_id: str | None = "t1",
    kept: Callable[[], Any] | None = None,
) -> threading.Thread:
    """A person who decides as soon as the request shows up (the agent waits meanwhile); with
    `kept`, once it also returns something (the run kept while it waits)."""

    def decide() -> None:
        while True:
            pending = [
                r
                for r in person.list_requests(status="pending")
                if thread_id is None or r.thread_id == thread_id
            ]
            if pending and (kept is None or kept() is not None):
                person.decide(pending[0].id, decision, actor="alice")
                return
            threading.Event().wait(0.01)

    thread = threading.Thread(target=decide, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("name", DECISIONS)
def test_waiting_strategy_gives_haystacks_messages(
    tmp_path: Path, backend: Backend, person: Backend, sqlite_store: SQLiteStore, name: str
) -> None:
    expected, runs = answered_expected(tmp_path, name)
    ledger = Ledger(tmp_path / "signoff.jsonl")
    script = one_call()
    strategy = SignoffConfirmationStrategy(Gate(backend, rules=RULES))
    agent = agent_with(script, ledger, ConfirmationHook(confirmation_strategies={"*": strategy}))
    deciding = decide_when_asked(person, DECISIONS[name][1])
    agent.run(USER, hook_context=CONTEXT)
    deciding.join()

    assert shown(script.seen[1]) == expected
    assert len(script.seen) == 2 and len(ledger.runs("send_email")) == runs
    assert request_of(sqlite_store, backend) is not None  # keyed by the model's tool_call_id


@pytest.mark.parametrize("name", ["approve", "modify with feedback", "reject with feedback"])
def test_waiting_strategy_under_run_async(
    tmp_path: Path, backend: Backend, person: Backend, sqlite_store: SQLiteStore, name: str
) -> None:
    expected, runs = answered_expected(tmp_path, name)
    ledger = Ledger(tmp_path / "signoff.jsonl")
    script = one_call()
    strategy = SignoffConfirmationStrategy(Gate(backend, rules=RULES))
    agent = agent_with(
        script, ledger, ConfirmationHook(confirmation_strategies={("send_email", "x"): strategy})
    )
    deciding = decide_when_asked(person, DECISIONS[name][1])
    asyncio.run(agent.run_async(USER, hook_context=CONTEXT))
    deciding.join()

    assert shown(script.seen[1]) == expected
    assert len(ledger.runs("send_email")) == runs


@pytest.mark.parametrize("name", DECISIONS)
@pytest.mark.parametrize("under", ["run", "run_async"])
def test_waiting_under_signoffs_hook_keeps_the_run_and_runs_the_call_by_its_execution_record(
    tmp_path: Path, backend: Backend, person: Backend, sqlite_store: SQLiteStore, name: str, under: str
) -> None:
    """Under `SignoffConfirmationHook` the messages are the same; the run is kept in the store
    while it waits (a crash could be resumed) and forgotten once the turn's decided call ran,
    through its execution record."""
    expected, runs = answered_expected(tmp_path, name)
    ledger = Ledger(tmp_path / "signoff.jsonl")
    script = one_call()
    strategy = SignoffConfirmationStrategy(Gate(backend, rules=RULES))
    agent = agent_with(script, ledger, SignoffConfirmationHook({"*": strategy}))
    creator = AGENT if isinstance(backend, Client) else "agent"
    deciding = decide_when_asked(person, DECISIONS[name][1], kept=lambda: kept_run(sqlite_store, creator))
    if under == "run":
        agent.run(USER, hook_context=CONTEXT)
    else:
        asyncio.run(agent.run_async(USER, hook_context=CONTEXT))
    deciding.join()

    assert shown(script.seen[1]) == expected
    request = request_of(sqlite_store, backend)
    assert request is not None
    assert [row["key"] for row in ledger.runs("send_email")] == [request.id] * runs
    execution = sqlite_store.get_execution(request.id)
    assert (execution.status if execution else None) == ("succeeded" if runs else None)
    assert kept_run(sqlite_store, creator) is None  # the pause is over: forgotten


def kept_run(store: SQLiteStore, creator: str) -> Any:
    return store.load_run_state("t1", created_by=creator)


@pytest.mark.parametrize("name", DECISIONS)
def test_signoff_ui_under_haystacks_own_strategy(
    tmp_path: Path, backend: Backend, person: Backend, sqlite_store: SQLiteStore, name: str
) -> None:
    expected, runs = haystack_expected(tmp_path, name)
    ledger = Ledger(tmp_path / "signoff.jsonl")
    script = one_call()
    strategy = BlockingConfirmationStrategy(
        confirmation_policy=AlwaysAskPolicy(), confirmation_ui=SignoffConfirmationUI(Gate(backend))
    )
    agent = agent_with(script, ledger, ConfirmationHook(confirmation_strategies={"send_email": strategy}))
    deciding = decide_when_asked(person, DECISIONS[name][1], thread_id=None)
    agent.run(USER)
    deciding.join()

    assert shown(script.seen[1]) == expected
    assert len(ledger.runs("send_email")) == runs


@pytest.mark.parametrize("name", DECISIONS)
def test_durable_pause_and_resume_give_haystacks_messages(
    tmp_path: Path, backend: Backend, person: Backend, sqlite_store: SQLiteStore, name: str
) -> None:
    expected, runs = answered_expected(tmp_path, name)
    ledger = Ledger(tmp_path / "signoff.jsonl")
    script = Script(calls(("send_email", EMAIL, "c1")))
    agent = agent_with(script, ledger, SignoffPauseHook(gate=Gate(backend, rules=RULES)))
    paused = agent.run(USER, hook_context=CONTEXT)

    assert paused["exit_reason"] == AWAITING_APPROVAL
    assert len(script.seen) == 1 and ledger.runs() == []  # no tool ran
    request = request_of(sqlite_store, backend)
    assert request is not None and request.status == "pending"
    saved = [m.to_dict() for m in paused["messages"]]

    person.decide(request.id, DECISIONS[name][1], actor="alice")
    history = [ChatMessage.from_dict(m) for m in saved]
    later = Script("done")
    result = resume(
        agent_with(later, ledger, SignoffPauseHook(gate=Gate(backend, rules=RULES))),
        history,
        hook_context=CONTEXT,
    )

    assert result["exit_reason"] == "text"
    assert [shown(seen) for seen in later.seen] == [
        expected
    ]  # the model is called once, with Haystack's history
    assert len(ledger.runs("send_email")) == runs
    if runs:
        assert ledger.runs()[0]["key"] == request.id  # signoff.idempotency_key() inside the tool

    again = Script("done again")
    resume(
        agent_with(again, ledger, SignoffPauseHook(gate=Gate(backend, rules=RULES))),
        history,
        hook_context=CONTEXT,
    )
    assert [shown(seen) for seen in again.seen] == [expected]  # the stored result, not a second run
    assert len(ledger.runs("send_email")) == runs


def test_durable_resume_under_run_async(
    tmp_path: Path, backend: Backend, person: Backend, sqlite_store: SQLiteStore
) -> None:
    expected, _ = haystack_expected(tmp_path, "modify")
    ledger = Ledger(tmp_path / "signoff.jsonl")
    gate = Gate(backend, rules=RULES)
    paused = asyncio.run(
        agent_with(Script(calls(("send_email", EMAIL, "c1"))), ledger, SignoffPauseHook(gate=gate)).run_async(
            USER, hook_context=CONTEXT
        )
    )
    assert paused["exit_reason"] == AWAITING_APPROVAL
    still = resume(
        agent_with(Script(), ledger, SignoffPauseHook(gate=gate)), paused["messages"], hook_context=CONTEXT
    )
    assert still["exit_reason"] == AWAITING_APPROVAL and ledger.runs() == []  # undecided: nothing ran

    request = request_of(sqlite_store, backend)
    assert request is not None
    person.decide(request.id, DECISIONS["modify"][1], actor="alice")
    later = Script("done")
    asyncio.run(
        resume_async(
            agent_with(later, ledger, SignoffPauseHook(gate=gate)), paused["messages"], hook_context=CONTEXT
        )
    )
    assert [shown(seen) for seen in later.seen] == [expected]
    assert [run["args"] for run in ledger.runs("send_email")] == [{"to": "bob", "body": "hi"}]


@pytest.mark.parametrize("name", ["reject", "modify"])
def test_a_decision_outlives_its_rule_switched_off_before_the_resume(
    tmp_path: Path, sqlite_store: SQLiteStore, name: str
) -> None:
    expected, runs = answered_expected(tmp_path, name)
    sqlite_store.set_layer("tool", "send_email", {"requires_approval": True}, actor="admin")
    ledger = Ledger(tmp_path / "signoff.jsonl")
    gate = Gate(sqlite_store, rules_refresh=0.0)
    paused = agent_with(Script(calls(("send_email", EMAIL, "c1"))), ledger, SignoffPauseHook(gate=gate)).run(
        USER, hook_context=CONTEXT
    )
    assert paused["exit_reason"] == AWAITING_APPROVAL
    request = sqlite_store.find_request("t1", "c1")
    assert request is not None
    sqlite_store.decide(request.id, DECISIONS[name][1], actor="alice")
    sqlite_store.set_layer("tool", "send_email", {"requires_approval": False}, actor="admin")  # HITL off

    later = Script("done")
    resume(agent_with(later, ledger, SignoffPauseHook(gate=gate)), paused["messages"], hook_context=CONTEXT)
    assert [shown(seen) for seen in later.seen] == [expected]
    assert [row["key"] for row in ledger.runs("send_email")] == [request.id] * runs


@pytest.mark.parametrize("key", ["send_email", ("send_email", "read_data")], ids=["name", "tuple"])
@pytest.mark.parametrize("name", ["approve", "reject with feedback"])
def test_a_named_key_asks_with_no_rules_as_haystacks_always_ask_does(
    tmp_path: Path, sqlite_store: SQLiteStore, key: Any, name: str
) -> None:
    """Under the stock hook and with no signoff rule at all, a tool named in the map asks, and
    the model's history is the one Haystack's own always-ask strategy gives it."""
    expected, runs = answered_expected(tmp_path, name)
    ledger = Ledger(tmp_path / "signoff.jsonl")
    script = one_call()
    strategy = SignoffConfirmationStrategy(Gate(sqlite_store, rules=RuleSet()))
    agent = agent_with(script, ledger, ConfirmationHook(confirmation_strategies={key: strategy}))
    deciding = decide_when_asked(sqlite_store, DECISIONS[name][1])
    agent.run(USER, hook_context=CONTEXT)
    deciding.join()

    assert shown(script.seen[1]) == expected
    assert len(ledger.runs("send_email")) == runs
    request = sqlite_store.find_request("t1", "c1")
    assert request is not None and request.rule.origin is not None
    assert request.rule.origin.source == "code"  # the map's name, not a rule, asked
