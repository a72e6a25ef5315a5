"""The gate's fast path for calls nobody is asked about: the same outcome as the full path."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from signoff import (
    Approve,
    Backend,
    Gate,
    Outcome,
    Pending,
    Reject,
    Scope,
    Store,
    Suspended,
    ToolCall,
    ToolEntry,
    WhenInput,
)
from signoff.outcome import not_required

ARGS = {"query": "weather in Paris"}


def expected(call_id: str) -> Outcome:
    return Outcome(tool_name="search", execute=True, tool_call_id=call_id, final_tool_params=ARGS)


def test_not_required_is_the_outcome_the_constructor_makes() -> None:
    outcome = not_required("search", "c1", ARGS)
    assert outcome == expected("c1")
    assert outcome.to_dict() == expected("c1").to_dict()
    assert Outcome.from_dict(outcome.to_dict()) == outcome
    with pytest.raises(dataclasses.FrozenInstanceError):
        outcome.execute = False  # type: ignore[misc]


@pytest.mark.parametrize("refresh", [0.0, 3600.0], ids=["full-path", "fast-path"])
def test_an_unasked_call_gets_the_same_outcome_either_way(
    backend: Backend, store: Store, refresh: float
) -> None:
    store.set_layer("tool", "send_email", {"requires_approval": True}, actor="admin")
    gate = Gate(backend, rules_refresh=refresh)
    scope = Scope(thread_id="fast", agent="bench")
    for index in range(3):  # the first call loads the rules; the next ones may take the fast path
        call = ToolCall(name="search", args=ARGS, id=f"c{index}")
        assert gate.review(call, scope) == expected(f"c{index}")
        assert gate.submit(call, scope) == expected(f"c{index}")
        assert asyncio.run(gate.areview(call, scope)) == expected(f"c{index}")
    assert store.list_requests(thread_id="fast") == []


def test_unasked_calls_without_ids_are_still_numbered_in_their_scope(backend: Backend) -> None:
    gate = Gate(backend, rules_refresh=3600.0)
    with gate.scope(thread_id="numbered"):
        ids = [gate.review(ToolCall(name="search", args=ARGS)).tool_call_id for _ in range(2)]
    assert ids[0] is not None and ids[1] is not None
    assert ids[0].endswith(":0") and ids[1].endswith(":1")
    assert ids[0].rsplit(":", 1)[0] == ids[1].rsplit(":", 1)[0]


def large(call: WhenInput) -> bool:
    return bool(call.args["amount"] > 1000)


@pytest.mark.parametrize("when", [large, "args.amount > 1000"], ids=["python", "cel"])
@pytest.mark.parametrize("refresh", [0.0, 3600.0], ids=["full-path", "fast-path"])
def test_a_when_is_evaluated_per_call_on_the_fast_path(
    backend: Backend, store: Store, refresh: float, when: Any
) -> None:
    gate = Gate(backend, rules_refresh=refresh)
    gate.register_tool("transfer", ToolEntry(requires_approval=True, when=when))
    scope = Scope(thread_id="when", agent="bank-bot")
    small = {"amount": 5}
    for index in range(2):  # the second round is answered from the rules in force
        big = ToolCall(name="transfer", args={"amount": 5000 + index}, id=f"big{index}")
        pending = gate.submit(big, scope)
        assert isinstance(pending, Pending), "a `when` that says yes asks, whatever said no before"
        store.decide(pending.request_id, Approve(), actor="alice")
        reviewed = gate.review(big, scope)
        assert reviewed.execute and reviewed.request_id == pending.request_id
        assert asyncio.run(gate.areview(big, scope)).request_id == pending.request_id
        call = ToolCall(name="transfer", args=small, id=f"small{index}")
        assert gate.review(call, scope) == not_required("transfer", f"small{index}", small)
        assert asyncio.run(gate.areview(call, scope)) == not_required("transfer", f"small{index}", small)
    assert sorted(request.tool_call_id for request in store.list_requests(thread_id="when")) == [
        "big0",
        "big1",
    ]


def test_may_ask_is_the_rules_answer_before_any_when(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules_refresh=0.0)
    gate.register_tool("transfer", ToolEntry(requires_approval=True, when="args.amount > 1000"))
    assert gate.may_ask("transfer") is True, "a `when` could say yes: the args must be read"
    assert gate.explain("transfer", args={"amount": 5}).ask is False
    assert gate.may_ask("search") is False
    store.set_layer("agent", "bank-bot", {"interrupt_on": {"search": True}}, actor="admin")
    assert gate.may_ask("search", "bank-bot") is True and gate.may_ask("search") is False
    store.set_layer("tool", "transfer", {"requires_approval": False}, actor="admin")
    assert gate.may_ask("transfer") is False, "the store's tool entry overrides the code's"


def test_the_kept_answer_the_gate_reads_first_goes_when_the_rules_change(
    backend: Backend, store: Store
) -> None:
    """`review` answers a tool the rules ask about nowhere from its kept answer (one lookup); a
    declaration that gates the tool drops that answer, so the next call asks."""
    gate = Gate(backend, rules_refresh=3600.0)
    scope = Scope(thread_id="kept", agent="bench")
    for index in range(2):
        call = ToolCall(name="search", args=ARGS, id=f"k{index}")
        assert gate.review(call, scope) == expected(f"k{index}")
    assert gate.nowhere.get("search") is True, "the fast path kept its answer for the next call"

    gate.register_tool("search", ToolEntry(requires_approval=True))
    assert "search" not in gate.nowhere
    for index in range(2):
        call = ToolCall(name="search", args=ARGS, id=f"asked{index}")
        pending = gate.submit(call, scope)
        assert isinstance(pending, Pending), "a tool gated since is asked about"
        store.decide(pending.request_id, Reject(message="no"), actor="alice")
        assert not gate.review(call, scope).execute
        assert not asyncio.run(gate.areview(call, scope)).execute


def test_a_guarded_tool_reads_the_kept_answer_first_and_asks_once_it_is_gone(backend: Backend) -> None:
    gate = Gate(backend, rules_refresh=3600.0)
    ran: list[str] = []

    def search(query: str) -> str:
        ran.append(query)
        return query

    guarded = gate.guard(search, requires_approval=False, suspend=True)
    with gate.scope(thread_id="guarded", agent="bench"):
        assert guarded("a").executed and guarded("b").executed
        assert gate.nowhere.get("search") is True
        gate.register_tool("search", ToolEntry(requires_approval=True))
        with pytest.raises(Suspended):
            guarded("c")
    assert ran == ["a", "b"]
