"""The gate's fast path for calls nobody is asked about: the same outcome as the full path."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from signoff import Backend, Gate, Outcome, Scope, Store, ToolCall
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
