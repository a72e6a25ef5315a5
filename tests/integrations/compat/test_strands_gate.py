"""The Strands adapter's gate: two agents sharing one gate with opposite declarations of the same
tool; a tool nobody is asked about runs without touching the store; an unattended run's gated
calls are one round per model turn, capped by `SIGNOFF_UNATTENDED_MAX_AUTO_RESUME`; a scope that
cannot be read; fail closed (a tool named as gated asks with no rules and under rules that do not
name it; a store that cannot answer runs nothing)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("strands", reason="strands-agents pins mcp<2.2: tested in the second venv (.venv-compat)")

from strands.types.exceptions import EventLoopException

from signoff import Approve, AutoResumeExceeded, Gate, RequestStatus, RuleSet, SignoffError, ToolEntry
from signoff.integrations.strands import SignoffHooks
from signoff.store import SQLiteStore
from tests.integrations.ledger import Ledger

from .strands_support import TRANSFER, USER, Scripted, final_text, make_agent, make_tools

GATED = {"transfer": ToolEntry(requires_approval=True)}


def test_two_agents_on_one_gate_keep_their_own_declarations(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    gate = Gate(sqlite_store)  # the rules kept in the store: none, so the declarations say
    careful = SignoffHooks(gate, tools=GATED)
    trusting = SignoffHooks(gate, tools={"transfer": ToolEntry(requires_approval=False)})
    careful_ledger, trusting_ledger = Ledger(tmp_path / "careful"), Ledger(tmp_path / "trusting")
    careful_agent = make_agent(Scripted(), make_tools(careful_ledger), [careful], agent_id="careful")
    trusting_model = Scripted()
    trusting_agent = make_agent(trusting_model, make_tools(trusting_ledger), [trusting], agent_id="trusting")

    paused = careful_agent(USER)
    finished = trusting_agent(USER)

    assert paused.stop_reason == "interrupt" and careful_ledger.runs("transfer") == []
    assert final_text(finished) == "done"
    assert [row["args"] for row in trusting_ledger.runs("transfer")] == [TRANSFER]
    assert sorted(trusting_model.seen) == [
        ("c0-1", "success", ["sent 5 to bob"]),
        ("c0-2", "success", ["rows of t"]),
    ]
    (request,) = sqlite_store.list_requests()
    assert request.thread_id == f"{careful_agent.session_id}/careful"
    assert request.status is RequestStatus.PENDING


def test_a_tool_nobody_is_asked_about_runs_without_touching_the_store(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    ledger = Ledger(tmp_path / "ledger")
    hooks = SignoffHooks(Gate(sqlite_store, rules=RuleSet()))
    assert hooks.gate.asks_nowhere("transfer")
    model = Scripted()
    result = make_agent(model, make_tools(ledger), [hooks])(USER)
    assert final_text(result) == "done"
    assert sorted(model.seen) == [("c0-1", "success", ["sent 5 to bob"]), ("c0-2", "success", ["rows of t"])]
    assert sqlite_store.list_requests() == []
    assert [row["key"] for row in ledger.runs()] == [None, None]  # no execution record either


@pytest.mark.parametrize("wait", [True, False], ids=["waiting", "durable"])
def test_unattended_gated_calls_are_one_round_per_model_turn(
    tmp_path: Path, sqlite_store: SQLiteStore, monkeypatch: pytest.MonkeyPatch, wait: bool
) -> None:
    monkeypatch.setenv("SIGNOFF_UNATTENDED_MAX_AUTO_RESUME", "2")
    ledger = Ledger(tmp_path / "ledger")
    rules = RuleSet(tools={**GATED, "lookup": ToolEntry(requires_approval=True)})
    hooks = SignoffHooks(Gate(sqlite_store, rules=rules), unattended=True, wait=wait)
    agent = make_agent(Scripted(turns=3), make_tools(ledger), [hooks])
    with pytest.raises(EventLoopException, match="HITL auto-resume exceeded 2 attempts") as failed:
        agent(USER)  # the run stops: the model is not told to go on
    assert isinstance(failed.value.__cause__, AutoResumeExceeded)
    requests = sqlite_store.list_requests(limit=100)
    rounds = {request.tool_call_id: request.round for request in requests}
    assert sorted(rounds) == ["c0-1", "c0-2", "c1-1", "c1-2"]  # the third turn asked nothing
    assert rounds["c0-1"] == rounds["c0-2"] != rounds["c1-1"] == rounds["c1-2"]
    assert None not in rounds.values()
    assert len(ledger.runs("transfer")) == 2  # the two rounds auto-approved ran, the third nothing


def test_a_bad_scope_in_the_agent_state_stops_the_run_and_runs_nothing(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    ledger = Ledger(tmp_path / "ledger")
    hooks = SignoffHooks(Gate(sqlite_store, rules=RuleSet(tools=GATED)))
    agent = make_agent(Scripted(), make_tools(ledger), [hooks], state={"signoff": {"thread": "typo"}})
    with pytest.raises(EventLoopException, match=r"agent.state\['signoff'\] has unknown keys") as failed:
        agent(USER)
    assert isinstance(failed.value.__cause__, ValueError)
    assert ledger.runs("transfer") == [] and sqlite_store.list_requests() == []


def test_the_scope_in_the_agent_state_names_the_thread_and_the_agent(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    hooks = SignoffHooks(Gate(sqlite_store, rules=RuleSet(tools=GATED)), app="payments")
    state = {"signoff": {"thread_id": "nightly-7", "agent": "payer"}}
    agent = make_agent(Scripted(), make_tools(Ledger(tmp_path / "ledger")), [hooks], state=state)
    assert agent(USER).stop_reason == "interrupt"
    (request,) = sqlite_store.list_requests()
    assert (request.thread_id, request.agent, request.app) == ("nightly-7", "payer", "payments")


@pytest.mark.parametrize(
    "rules",
    [None, RuleSet(tools={"lookup": ToolEntry(requires_approval=False)})],
    ids=["no-rules", "rules-without-it"],
)
def test_a_tool_named_as_gated_never_runs_unasked(
    tmp_path: Path, sqlite_store: SQLiteStore, rules: RuleSet | None
) -> None:
    ledger = Ledger(tmp_path / "ledger")
    hooks = SignoffHooks(Gate(sqlite_store, rules=rules), tools=GATED)
    result = make_agent(Scripted(), make_tools(ledger), [hooks])(USER)
    assert result.stop_reason == "interrupt"
    assert [row["tool"] for row in ledger.runs()] == ["lookup"]
    (request,) = sqlite_store.list_requests()
    assert request.tool_name == "transfer" and request.status is RequestStatus.PENDING


class DownStore(SQLiteStore):
    """A store that cannot answer once `down` is set (its rules were read before)."""

    down = False

    def find_request(self, *args: Any, **kwargs: Any) -> Any:
        if self.down:
            raise SignoffError("the store cannot answer")
        return super().find_request(*args, **kwargs)

    def create_request(self, *args: Any, **kwargs: Any) -> Any:
        if self.down:
            raise SignoffError("the store cannot answer")
        return super().create_request(*args, **kwargs)


@pytest.mark.parametrize("wait", [True, False], ids=["waiting", "durable"])
def test_a_store_that_cannot_answer_stops_the_run_and_runs_nothing(tmp_path: Path, wait: bool) -> None:
    store = DownStore(str(tmp_path / "signoff.db"))
    ledger = Ledger(tmp_path / "ledger")
    hooks = SignoffHooks(Gate(store, rules=RuleSet(tools=GATED)), wait=wait)
    store.down = True
    with pytest.raises(EventLoopException, match="the store cannot answer") as failed:
        make_agent(Scripted(), make_tools(ledger), [hooks])(USER)
    assert isinstance(failed.value.__cause__, SignoffError)
    assert ledger.runs("transfer") == []


def test_a_direct_tool_call_waits_in_waiting_mode_and_is_refused_in_durable_mode(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    """`agent.tool.transfer(...)` cannot be paused (Strands refuses an interrupt there): durable
    mode runs nothing; waiting mode waits for the decision as in a run."""
    ledger = Ledger(tmp_path / "ledger")
    durable = make_agent(
        Scripted(), make_tools(ledger), [SignoffHooks(Gate(sqlite_store, rules=RuleSet(tools=GATED)))]
    )
    with pytest.raises(RuntimeError, match="cannot raise interrupt in direct tool call"):
        durable.tool.transfer(amount=5, to="bob")
    assert ledger.runs() == []

    waiting = SignoffHooks(Gate(sqlite_store, rules=RuleSet(tools=GATED)), wait=True)
    agent = make_agent(Scripted(), make_tools(ledger), [waiting])
    person = threading.Thread(target=approve_when_asked, args=(sqlite_store, {"amount": 6, "to": "bob"}))
    person.start()
    result = agent.tool.transfer(amount=6, to="bob")
    person.join()
    assert (result["status"], result["content"]) == ("success", [{"text": "sent 6 to bob"}])
    assert [row["args"] for row in ledger.runs()] == [{"amount": 6, "to": "bob"}]


def approve_when_asked(store: SQLiteStore, args: dict[str, Any]) -> None:
    while True:
        found = [r for r in store.list_requests(status=RequestStatus.PENDING) if r.args == args]
        if found:
            store.decide(found[0].id, Approve(), actor="alice")
            return
        time.sleep(0.01)
