"""The gate's other faces: suspending, input requests, cancel, scopes and call ids, rules in the store."""

from __future__ import annotations

import pytest

from signoff import (
    Approve,
    Backend,
    Edit,
    Gate,
    InvalidArguments,
    Pending,
    Reject,
    RequestConflict,
    RequestStatus,
    Respond,
    RuleSet,
    Scope,
    Store,
    Suspended,
    ToolCall,
    idempotency_key,
)
from tests.helpers import person_deciding, wait_for_pending

RULES = RuleSet.from_yaml("tools: {book_flight: {requires_approval: true}}")


def test_submit_returns_pending_then_the_outcome(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RULES)
    call = ToolCall(name="book_flight", args={"to": "LIS"}, id="b1")
    first = gate.submit(call, Scope(thread_id="s"))
    assert isinstance(first, Pending)
    assert (first.thread_id, first.tool_call_id) == ("s", "b1")
    assert isinstance(gate.submit(call, Scope(thread_id="s")), Pending)
    store.decide(first.request_id, Edit(args={"to": "OPO"}), actor="alice")
    outcome = gate.submit(call, Scope(thread_id="s"))
    assert not isinstance(outcome, Pending)
    assert outcome.final_tool_params == {"to": "OPO"}


def test_run_in_suspending_mode_raises_the_signal(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RULES)
    runs: list[str] = []
    call = ToolCall(name="book_flight", args={"to": "LIS"}, id="b2")
    with pytest.raises(Suspended) as signal:
        gate.run(call, lambda to: runs.append(to), Scope(thread_id="s"), suspend=True)
    store.decide(signal.value.pending.request_id, Approve(), actor="alice")
    reply = gate.run(call, lambda to: runs.append(to) or f"booked {to}", Scope(thread_id="s"), suspend=True)
    assert runs == ["LIS"]
    assert reply.content == "booked LIS"


def test_the_tool_sees_the_request_id_as_idempotency_key(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RULES)
    seen: list[str | None] = []
    call = ToolCall(name="book_flight", args={"to": "LIS"}, id="b3")
    with person_deciding(store, Approve()):
        reply = gate.run(call, lambda to: seen.append(idempotency_key()), Scope(thread_id="s"))
    assert seen == [reply.outcome.request_id]
    assert idempotency_key() is None


def test_a_failing_tool_is_recorded_and_not_rerun_by_a_replay(backend: Backend, store: Store) -> None:
    from signoff import ExecutionStatus, ToolFailed

    gate = Gate(backend, rules=RULES)
    call = ToolCall(name="book_flight", args={"to": "LIS"}, id="b4")
    pending = gate.submit(call, Scope(thread_id="s"))
    assert isinstance(pending, Pending)
    store.decide(pending.request_id, Approve(), actor="alice")

    def broken(to: str) -> str:
        raise ConnectionError("airline API down")

    with pytest.raises(ConnectionError):
        gate.run(call, broken, Scope(thread_id="s"))
    execution = store.get_execution(pending.request_id)
    assert execution is not None and execution.status is ExecutionStatus.FAILED
    assert execution.error == "ConnectionError: airline API down"
    with pytest.raises(ToolFailed, match="airline API down"):
        gate.run(call, lambda to: "booked", Scope(thread_id="s"))
    assert gate.run(call, lambda to: "booked", Scope(thread_id="s"), idempotent=True).content == "booked"


def test_ask_validates_the_answer_against_its_schema(backend: Backend, store: Store) -> None:
    gate = Gate(backend)
    schema = {"type": "object", "properties": {"budget": {"type": "integer"}}, "required": ["budget"]}
    answers: list[object] = []
    import threading

    thread = threading.Thread(
        target=lambda: answers.append(
            gate.ask("What budget may I spend?", schema=schema, scope=Scope(thread_id="q"), id="q1")
        )
    )
    thread.start()
    request = wait_for_pending(store)
    assert request.kind == "input"
    assert request.description == "What budget may I spend?"
    with pytest.raises(InvalidArguments, match="budget is required"):
        store.decide(request.id, Respond(value={"amount": 5}), actor="alice")
    assert store.get_request(request.id).status is RequestStatus.PENDING
    store.decide(request.id, Respond(value={"budget": 500}), actor="alice")
    thread.join(10)
    [outcome] = answers
    assert outcome.tool_result == {"budget": 500}  # type: ignore[attr-defined]


def test_cancel_ends_a_runs_open_requests_and_the_waiter_learns(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RULES)
    pending = gate.submit(ToolCall(name="book_flight", args={"to": "LIS"}, id="c1"), Scope(thread_id="abort"))
    assert isinstance(pending, Pending)
    assert gate.cancel("abort", reason="user closed the chat") == 1
    outcome = gate.review(ToolCall(name="book_flight", args={"to": "LIS"}, id="c1"), Scope(thread_id="abort"))
    assert outcome.status == "cancelled"
    assert outcome.model_text == "The approval request was cancelled. Reason: user closed the chat"


def test_a_reused_call_id_for_another_tool_is_refused(backend: Backend, store: Store) -> None:
    gate = Gate(
        backend,
        rules=RuleSet.from_yaml("tools: {a: {requires_approval: true}, b: {requires_approval: true}}"),
    )
    gate.submit(ToolCall(name="a", args={}, id="same"), Scope(thread_id="t"))
    with pytest.raises(RequestConflict, match="already belongs to a call of 'a'"):
        gate.submit(ToolCall(name="b", args={}, id="same"), Scope(thread_id="t"))


def test_calls_without_ids_get_stable_ids_in_a_scope(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RULES)

    def ids_of_a_run() -> list[str]:
        with gate.scope(thread_id="replay"):
            found = [gate.submit(ToolCall(name="book_flight", args={"to": "LIS"})) for _ in range(2)]
            found.append(gate.submit(ToolCall(name="book_flight", args={"to": "OPO"})))
        return [p.tool_call_id for p in found]  # type: ignore[union-attr]

    first = ids_of_a_run()
    assert len(set(first)) == 3
    assert ids_of_a_run() == first
    assert len(store.list_requests(thread_id="replay")) == 3


def test_rules_kept_in_the_store_apply_at_once(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules_refresh=0)
    call = ToolCall(name="book_flight", args={"to": "LIS"})
    assert not isinstance(gate.submit(call, Scope(thread_id="r1", agent="travel")), Pending)
    store.set_layer("tool", "book_flight", {"requires_approval": True}, actor="admin")
    assert isinstance(gate.submit(call, Scope(thread_id="r2", agent="travel")), Pending)
    store.set_layer("agent", "travel", {"hitl_disabled": True}, actor="admin")
    assert not isinstance(gate.submit(call, Scope(thread_id="r3", agent="travel")), Pending)


def test_reject_via_helper_thread_while_guarded_call_waits(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RULES)

    @gate.guard
    def book_flight(to: str) -> str:
        return f"booked {to}"

    with gate.scope(thread_id="g"), person_deciding(store, Reject(message="too expensive")):
        reply = book_flight("LIS")
    assert reply.is_error and reply.content.endswith("With user feedback: too expensive")


def test_an_invalid_tool_schema_is_refused_before_asking(backend: Backend, store: Store) -> None:
    from signoff import ConfigError

    gate = Gate(backend, rules=RULES)
    broken = ToolCall(name="book_flight", args={"to": "LIS"}, id="bad", schema={"type": "nonsense"})
    with pytest.raises(ConfigError, match="invalid JSON Schema"):
        gate.submit(broken, Scope(thread_id="schema"))
    assert store.list_requests(thread_id="schema") == []


def test_a_draft_is_shown_while_args_stream_and_decided_once_ready(backend: Backend, store: Store) -> None:
    from signoff import RequestNotReady

    gate = Gate(backend, rules=RULES)
    call_id = "streamed-1"
    draft = gate.draft(ToolCall(name="book_flight", args={"to": "L"}, id=call_id), Scope(thread_id="d"))
    assert draft is not None and draft.status is RequestStatus.DRAFTING
    with pytest.raises(RequestNotReady):
        store.decide(draft.id, Approve(), actor="alice")
    backend.update_draft(draft.id, args={"to": "LIS"})
    ready = backend.update_draft(draft.id, args={"date": "2026-12-01"}, ready=True)
    assert ready.status is RequestStatus.PENDING
    assert ready.args == {"to": "LIS", "date": "2026-12-01"}
    assert "LIS" in ready.description
    store.decide(draft.id, Approve(), actor="alice")
    final = ToolCall(name="book_flight", args={"to": "LIS", "date": "2026-12-01"}, id=call_id)
    outcome = gate.review(final, Scope(thread_id="d"), timeout=5)
    assert outcome.final_tool_params == {"to": "LIS", "date": "2026-12-01"}
    assert gate.draft(ToolCall(name="unruled_tool", args={}), Scope(thread_id="d")) is None
