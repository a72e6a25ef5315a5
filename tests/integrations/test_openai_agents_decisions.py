"""The Agents SDK adapter with the real SDK and its ScriptedModel: each decision, as the model sees
it next (the exact items of its next input) and how many times each tool ran; a gated and an
ungated call in one turn; a disallowed decision; a deadline; edit for a tool signoff did not wrap."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import function_tool

from signoff import (
    Approve,
    Client,
    ConfigError,
    Decision,
    DecisionNotAllowed,
    Edit,
    Gate,
    Reject,
    Respond,
    RuleSet,
)
from signoff.integrations.openai_agents import SignoffApproval, SignoffRun
from signoff.store import SQLiteStore
from tests.live import LiveServer

from .oa_support import EMAIL, USER, Ledger, agent, make_tools, outputs, script, shown

AGENT_USER = "mail-agent"
SEND_EMAIL_CALL = {
    "arguments": '{"to":"alice","body":"hi"}',
    "call_id": "c1",
    "name": "send_email",
    "type": "function_call",
    "id": "c1",
}
LOOKUP_CALL = {
    "arguments": '{"table":"t"}',
    "call_id": "c2",
    "name": "lookup",
    "type": "function_call",
    "id": "c2",
}


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing here may reach api.openai.com (or anywhere but this machine)."""
    connect = socket.socket.connect

    def guarded(sock: socket.socket, address: Any) -> Any:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in (
            "127.0.0.1",
            "::1",
            "localhost",
        ):
            raise AssertionError(f"a test tried to reach {address}")
        return connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def rules(**entry: Any) -> RuleSet:
    return RuleSet.model_validate({"tools": {"send_email": {"requires_approval": True, **entry}}})


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


def creator(backend: Any) -> str:
    return AGENT_USER if isinstance(backend, Client) else "agent"


def start(approval: SignoffApproval, ledger: Ledger, thread: str = "t1") -> tuple[SignoffRun, list[Any]]:
    tools = approval.gate_tools(make_tools(ledger))
    model = script()
    paused = asyncio.run(approval.run(agent(model, tools), USER, thread_id=thread))
    return paused, tools


def resume(approval: SignoffApproval, tools: list[Any], thread: str = "t1") -> tuple[SignoffRun, Any]:
    model = script(first=False)
    return asyncio.run(approval.resume(agent(model, tools), thread)), model


DECIDED = [
    (Approve(), [("c2", "rows of t"), ("c1", "sent to alice")], [EMAIL]),
    (
        Edit(args={"to": "bob", "body": "hi"}),
        [
            ("c2", "rows of t"),
            (
                "c1",
                "The parameters for tool 'send_email' were updated by the user to:\n"
                '{"to": "bob", "body": "hi"}\n\nsent to bob',
            ),
        ],
        [{"to": "bob", "body": "hi"}],
    ),
    (
        Reject(message="not now"),
        [
            ("c2", "rows of t"),
            ("c1", "Tool execution for 'send_email' was rejected by the user. With user feedback: not now"),
        ],
        [],
    ),
    (Respond(message="I mailed her myself"), [("c2", "rows of t"), ("c1", "I mailed her myself")], []),
    (Respond(value={"sent": False}), [("c2", "rows of t"), ("c1", '{"sent": false}')], []),
]


@pytest.mark.parametrize(
    ("decision", "seen", "sent"), DECIDED, ids=["approve", "edit", "reject", "respond", "respond-value"]
)
def test_each_decision_as_the_model_sees_it_next(
    tmp_path: Path,
    sqlite_store: SQLiteStore,
    backend: Any,
    decision: Decision,
    seen: list[tuple[str, str]],
    sent: list[dict[str, Any]],
) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    approval = SignoffApproval(Gate(backend, rules=rules()))
    paused, tools = start(approval, ledger)

    assert paused.paused and paused.final_output is None
    (waiting,) = paused.pending
    assert (waiting.thread_id, waiting.tool_call_id) == ("t1", "c1")
    assert [row["tool"] for row in ledger.runs()] == ["lookup"]  # the ungated call ran in its turn
    kept = sqlite_store.load_run_state("t1", created_by=creator(backend))
    assert kept is not None and kept.kind == "openai-agents" and '"call_id": "c1"' in kept.state

    sqlite_store.decide(waiting.request_id, decision, actor="alice")
    done, model = resume(approval, tools)

    assert done.final_output == "done" and not done.paused
    assert shown(model)[:3] == [{"content": USER, "role": "user"}, SEND_EMAIL_CALL, LOOKUP_CALL]
    assert outputs(model) == seen
    assert [row["args"] for row in ledger.runs("send_email")] == sent
    assert [row["key"] for row in ledger.runs("send_email")] == [waiting.request_id] * len(sent)
    assert len(ledger.runs("lookup")) == 1
    assert sqlite_store.load_run_state("t1", created_by=creator(backend)) is None  # finished: forgotten


def test_a_resumed_run_replayed_runs_the_tool_once(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    approval = SignoffApproval(Gate(sqlite_store, rules=rules()))
    paused, tools = start(approval, ledger)
    kept = sqlite_store.load_run_state("t1")
    assert kept is not None
    sqlite_store.decide(paused.pending[0].request_id, Approve(), actor="alice")
    first, model = resume(approval, tools)

    # the process stopped after the tool ran, before the state was forgotten: resumed again
    sqlite_store.save_run_state("t1", kept.state, kind=kept.kind)
    again, replayed = resume(approval, tools)

    assert outputs(replayed) == outputs(model) == [("c2", "rows of t"), ("c1", "sent to alice")]
    assert again.final_output == first.final_output == "done"
    assert len(ledger.runs("send_email")) == 1
    execution = sqlite_store.get_execution(paused.pending[0].request_id)
    assert execution is not None and execution.status == "succeeded"


def test_a_disallowed_decision_is_refused_and_the_call_stays_pending(
    tmp_path: Path, sqlite_store: SQLiteStore, backend: Any
) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    approval = SignoffApproval(Gate(backend, rules=rules(allowed_decisions=["approve", "reject"])))
    paused, tools = start(approval, ledger)
    (waiting,) = paused.pending
    with pytest.raises(DecisionNotAllowed, match="respond"):
        sqlite_store.decide(waiting.request_id, Respond(message="no"), actor="alice")
    still, model = resume(approval, tools)
    assert still.paused and still.result is None
    assert [p.request_id for p in still.pending] == [waiting.request_id]
    assert model.calls == ()  # the model was not asked again
    assert sqlite_store.get_request(waiting.request_id).status == "pending"
    assert [row["tool"] for row in ledger.runs()] == ["lookup"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("on_expire", "seen", "sent"),
    [
        ("reject", [("c2", "rows of t"), ("c1", "Too late.")], 0),
        ("approve", [("c2", "rows of t"), ("c1", "sent to alice")], 1),
    ],
)
def test_a_deadline_resumes_with_the_on_expire_outcome(
    tmp_path: Path, sqlite_store: SQLiteStore, on_expire: str, seen: list[tuple[str, str]], sent: int
) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    approval = SignoffApproval(
        Gate(sqlite_store, rules=rules(deadline="1s", on_expire=on_expire, expire_message="Too late."))
    )
    paused, tools = start(approval, ledger)
    (waiting,) = paused.pending
    deadline = sqlite_store.get_request(waiting.request_id).deadline
    while sqlite_store.get_request(waiting.request_id).deadline >= deadline and _before(deadline):
        asyncio.run(asyncio.sleep(0.05))
    done, model = resume(approval, tools)
    assert done.final_output == "done"
    assert outputs(model) == seen
    assert len(ledger.runs("send_email")) == sent
    assert sqlite_store.get_request(waiting.request_id).status == "expired"


def _before(deadline: Any) -> bool:
    from datetime import UTC, datetime

    return datetime.now(UTC) <= deadline


def test_waiting_inline_takes_the_decision_made_meanwhile(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    approval = SignoffApproval(Gate(sqlite_store, rules=rules()))
    tools = approval.gate_tools(make_tools(ledger))
    model = script()

    async def decide_when_asked() -> None:
        while (request := sqlite_store.find_request("t1", "c1")) is None:
            await asyncio.sleep(0.01)
        await asyncio.to_thread(sqlite_store.decide, request.id, Reject(message="no"), actor="alice")

    async def both() -> SignoffRun:
        deciding = asyncio.create_task(decide_when_asked())
        run = await approval.run(agent(model, tools), USER, thread_id="t1", wait=True)
        await deciding
        return run

    done = asyncio.run(both())
    assert done.final_output == "done"
    assert outputs(model) == [
        ("c2", "rows of t"),
        ("c1", "Tool execution for 'send_email' was rejected by the user. With user feedback: no"),
    ]
    assert ledger.runs("send_email") == []
    assert sqlite_store.load_run_state("t1") is None  # never paused: nothing kept


def test_the_decorator_variant_gates_a_new_tool(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    approval = SignoffApproval(Gate(sqlite_store, rules=rules()))
    sent: list[str] = []

    @approval.function_tool(name_override="send_email")
    def mail(to: str, body: str) -> str:
        """Send an email."""
        sent.append(to)
        return f"sent to {to}"

    tools = [mail, make_tools(Ledger(tmp_path / "ledger.jsonl"))[1]]
    paused = asyncio.run(approval.run(agent(script(), tools), USER, thread_id="t1"))
    assert sent == [] and len(paused.pending) == 1
    sqlite_store.decide(paused.pending[0].request_id, Edit(args={"to": "carol", "body": "hi"}), actor="alice")
    done, model = resume(approval, tools)
    assert done.final_output == "done" and sent == ["carol"]
    assert outputs(model)[1] == (
        "c1",
        "The parameters for tool 'send_email' were updated by the user to:\n"
        '{"to": "carol", "body": "hi"}\n\nsent to carol',
    )


def test_rules_that_ask_nothing_leave_the_run_alone(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    approval = SignoffApproval(Gate(sqlite_store, rules=RuleSet()))
    tools = approval.gate_tools(make_tools(ledger))
    model = script()
    done = asyncio.run(approval.run(agent(model, tools), USER, thread_id="t1"))
    assert done.final_output == "done"
    assert outputs(model) == [("c1", "sent to alice"), ("c2", "rows of t")]
    assert [row["key"] for row in ledger.runs()] == [None, None]  # no request, no execution record
    assert sqlite_store.find_request("t1", "c1") is None


def test_edit_for_a_tool_signoff_did_not_wrap_is_refused_before_a_request_is_made(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    sent: list[str] = []

    @function_tool(needs_approval=True)
    def send_email(to: str, body: str) -> str:
        """Send an email (approval by the SDK's own flag; not wrapped by signoff)."""
        sent.append(to)
        return f"sent to {to}"

    tools = [send_email, make_tools(Ledger(tmp_path / "ledger.jsonl"))[1]]

    approval = SignoffApproval(Gate(sqlite_store, rules=RuleSet()))
    with pytest.raises(ConfigError, match="cannot run edited args"):
        asyncio.run(approval.run(agent(script(), tools), USER, thread_id="t1"))
    assert sqlite_store.find_request("t1", "c1") is None

    narrow = SignoffApproval(Gate(sqlite_store, rules=rules(allowed_decisions=["approve", "reject"])))
    paused = asyncio.run(narrow.run(agent(script(), tools), USER, thread_id="t2"))
    (waiting,) = paused.pending
    assert waiting.request.rule.allowed_decisions == ("approve", "reject")
    sqlite_store.decide(waiting.request_id, Approve(), actor="alice")
    done = asyncio.run(narrow.resume(agent(script(first=False), tools), "t2"))
    assert done.final_output == "done" and sent == ["alice"]
