"""Which calls the CrewAI hooks ask about, and whose decision a call gets: two agents sharing one
gate with opposite declarations, two crews waiting at once in one process, the hooks' own
coverage, and fail closed (CrewAI runs a tool whose hook raises: signoff's never does)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("crewai", reason="CrewAI is tested in the second venv: pip install -e '.[dev-compat]'")

from crewai.hooks import get_after_tool_call_hooks, get_before_tool_call_hooks

from signoff import Approve, Gate, Reject, RequestStatus, RuleSet, ToolEntry
from signoff.integrations.crewai import SignoffHooks
from signoff.store import SQLiteStore
from tests.integrations.ledger import Ledger

from .crewai_support import TRANSFER, Scripted, kickoff, make_crew

GATED = {"transfer": ToolEntry(requires_approval=True)}
REJECTED = "Tool execution for 'transfer' was rejected by the user. With user feedback: {}"


def run_in_thread(crew: object, outputs: dict[str, str], key: str) -> threading.Thread:
    thread = threading.Thread(target=lambda: outputs.__setitem__(key, kickoff(crew)), daemon=True)  # type: ignore[arg-type]
    thread.start()
    return thread


def pending_on(store: SQLiteStore, count: int) -> list[object]:
    while len(found := store.list_requests(status="pending")) < count:
        time.sleep(0.01)
    return found  # type: ignore[return-value]


def test_two_agents_on_one_gate_with_opposite_declarations(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    """No rule in force: agent A names transfer as gated, agent B as not; both run at once."""
    ledger_a, ledger_b = Ledger(tmp_path / "a.jsonl"), Ledger(tmp_path / "b.jsonl")
    crew_a, agent_a = make_crew(ledger_a, role="payer")
    crew_b, agent_b = make_crew(ledger_b, role="refunder")
    gate = Gate(sqlite_store)
    outputs: dict[str, str] = {}
    with (
        SignoffHooks(gate, tools=GATED, agents=[agent_a]),
        SignoffHooks(gate, tools={"transfer": ToolEntry(requires_approval=False)}, agents=[agent_b]),
    ):
        a = run_in_thread(crew_a, outputs, "a")
        b = run_in_thread(crew_b, outputs, "b")
        b.join()
        assert outputs["b"] == "sent 5 to bob"  # B's ran while A's waits
        (request,) = pending_on(sqlite_store, 1)
        assert request.thread_id == f"crewai-{crew_a.id}"  # type: ignore[attr-defined]
        sqlite_store.decide(request.id, Reject(message="no"), actor="alice")  # type: ignore[attr-defined]
        a.join()
    assert outputs["a"] == REJECTED.format("no")
    assert ledger_a.runs() == [] and [row["args"] for row in ledger_b.runs()] == [TRANSFER]


def test_two_crews_waiting_at_once_each_get_their_own_decision(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    crews = {
        "small": make_crew(ledger)[0],
        "large": make_crew(ledger, model=Scripted(model="s", args={"amount": 900, "to": "eve"}))[0],
    }
    outputs: dict[str, str] = {}
    with SignoffHooks(Gate(sqlite_store), tools=GATED):
        threads = [run_in_thread(crew, outputs, key) for key, crew in crews.items()]
        requests = pending_on(sqlite_store, 2)
        for request in requests:
            large = request.args["amount"] == 900  # type: ignore[attr-defined]
            decision = Reject(message="too much") if large else Approve()
            sqlite_store.decide(request.id, decision, actor="alice")  # type: ignore[attr-defined]
        for thread in threads:
            thread.join()
    assert outputs == {"small": "sent 5 to bob", "large": REJECTED.format("too much")}
    assert [row["args"] for row in ledger.runs()] == [TRANSFER]
    assert {r.thread_id for r in requests} == {f"crewai-{c.id}" for c in crews.values()}  # type: ignore[attr-defined]


def test_a_tool_named_as_gated_asks_with_no_rules_and_runs_when_a_rule_turns_it_off(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    crew, _ = make_crew(ledger)
    with SignoffHooks(Gate(sqlite_store), tools=GATED):
        person = threading.Thread(
            target=lambda: sqlite_store.decide(pending_on(sqlite_store, 1)[0].id, Reject(), actor="a"),  # type: ignore[attr-defined]
            daemon=True,
        )
        person.start()
        assert kickoff(crew).startswith("Tool execution for 'transfer' was rejected by the user")
        person.join()
    assert ledger.runs() == []
    off = RuleSet.model_validate({"tools": {"transfer": {"requires_approval": False}}})
    crew, _ = make_crew(ledger)
    with SignoffHooks(Gate(sqlite_store, rules=off), tools=GATED):
        assert kickoff(crew) == "sent 5 to bob"
    assert len(sqlite_store.list_requests()) == 1  # the second run asked nobody


def test_a_store_that_fails_blocks_the_call_and_the_model_is_told(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    """CrewAI swallows a hook's exception and runs the tool: signoff's hook blocks instead."""
    ledger = Ledger(tmp_path / "ledger.jsonl")
    crew, _ = make_crew(ledger)
    gate = Gate(
        sqlite_store, rules=RuleSet.model_validate({"tools": {"transfer": {"requires_approval": True}}})
    )
    sqlite_store.close()
    with SignoffHooks(gate):
        out = kickoff(crew)
    assert out.startswith("Tool transfer was not run: signoff")
    assert ledger.runs() == []


def test_a_tool_that_raises_is_told_as_crewai_tells_it(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    crew, _ = make_crew(ledger, model=Scripted(model="s", args={"amount": "five", "to": "bob"}))
    with SignoffHooks(Gate(sqlite_store), tools=GATED):
        person = threading.Thread(
            target=lambda: sqlite_store.decide(pending_on(sqlite_store, 1)[0].id, Approve(), actor="a"),  # type: ignore[attr-defined]
            daemon=True,
        )
        person.start()
        out = kickoff(crew)
        person.join()
    assert out.startswith("Error executing tool: Arguments validation failed")
    assert ledger.runs() == []
    (request,) = sqlite_store.list_requests()
    execution = sqlite_store.get_execution(request.id)
    assert execution is not None and execution.status == "failed"


def test_installing_covers_each_agent_once_and_uninstalling_leaves_crewai_as_it_was(
    sqlite_store: SQLiteStore,
) -> None:
    before, after = get_before_tool_call_hooks(), get_after_tool_call_hooks()
    gate = Gate(sqlite_store)
    everyone = SignoffHooks(gate).install()
    one = SignoffHooks(gate, agents=["agent-1"]).install()  # an agent's key
    try:
        with pytest.raises(ValueError, match="for every agent are installed already"):
            SignoffHooks(gate).install()
        with pytest.raises(ValueError, match=r"agents \['agent-1'\] are covered"):
            SignoffHooks(gate, agents=["agent-1", "agent-2"]).install()
        assert len(get_before_tool_call_hooks()) == len(before) + 1  # one pair, however many
    finally:
        assert one.uninstall() and everyone.uninstall()
    assert not everyone.uninstall()
    assert get_before_tool_call_hooks() == before and get_after_tool_call_hooks() == after


def test_the_same_call_asked_again_is_a_new_request_not_a_replay(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    """CrewAI gives no call id: a crew run twice with the same args asks twice, and the second
    decision is its own (a replay would give the first run's result without asking)."""
    ledger = Ledger(tmp_path / "ledger.jsonl")
    crew, _ = make_crew(ledger)
    outputs = []
    with SignoffHooks(Gate(sqlite_store), tools=GATED):
        for decision in (Approve(), Reject(message="once is enough")):
            person = threading.Thread(
                target=lambda d=decision: sqlite_store.decide(
                    pending_on(sqlite_store, 1)[0].id, d, actor="a"
                ),  # type: ignore[attr-defined]
                daemon=True,
            )
            person.start()
            outputs.append(kickoff(crew))
            person.join()
    assert outputs == ["sent 5 to bob", REJECTED.format("once is enough")]
    assert [row["args"] for row in ledger.runs()] == [TRANSFER]
    requests = sqlite_store.list_requests()
    assert len(requests) == 2 and len({r.tool_call_id for r in requests}) == 2
    assert len({r.thread_id for r in requests}) == 1  # one crew, one thread


def test_hooks_for_an_agent_cover_the_copies_crewai_makes_of_it(
    tmp_path: Path, sqlite_store: SQLiteStore
) -> None:
    """`kickoff_for_each` runs copies of the crew's agents (new ids, the same key): still gated."""
    ledger = Ledger(tmp_path / "ledger.jsonl")
    crew, agent = make_crew(ledger)
    with SignoffHooks(Gate(sqlite_store), tools=GATED, agents=[agent]):
        person = threading.Thread(
            target=lambda: sqlite_store.decide(
                pending_on(sqlite_store, 1)[0].id, Reject(message="no"), actor="a"
            ),  # type: ignore[attr-defined]
            daemon=True,
        )
        person.start()
        (out,) = crew.kickoff_for_each(inputs=[{}])
        person.join()
    assert str(out.raw) == REJECTED.format("no")
    assert ledger.runs() == []


def test_no_decision_within_the_timeout_blocks_the_call(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    ledger = Ledger(tmp_path / "ledger.jsonl")
    crew, _ = make_crew(ledger)
    with SignoffHooks(Gate(sqlite_store), tools=GATED, timeout=0.05):
        out = kickoff(crew)
    assert out.startswith("Tool transfer was not run: signoff refused the call (")
    assert ledger.runs() == []
    (request,) = sqlite_store.list_requests()
    assert request.status is RequestStatus.PENDING  # still there for a person; the run went on without it
