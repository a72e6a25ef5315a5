"""Each decision type end to end through `@gate.guard`, with the exact texts the model sees."""

from __future__ import annotations

import asyncio

import pytest

from signoff import (
    Approve,
    Backend,
    DecisionNotAllowed,
    Edit,
    Gate,
    InvalidArguments,
    Reject,
    RequestStatus,
    Respond,
    RuleSet,
    Store,
)
from tests.helpers import person_deciding, wait_for_pending

RULES = RuleSet.from_yaml(
    """
tools:
  send_email:
    requires_approval: true
    allowed_decisions: [approve, edit, reject, respond]
  delete_records:
    requires_approval: true
    allowed_decisions: [approve, reject]
"""
)


@pytest.fixture
def gate(backend: Backend) -> Gate:
    return Gate(backend, rules=RULES)


def make_tools(gate: Gate) -> tuple[list[dict[str, object]], object, object]:
    sent: list[dict[str, object]] = []

    @gate.guard
    def send_email(to: str, subject: str) -> str:
        """Send an email."""
        sent.append({"to": to, "subject": subject})
        return f"Email sent to {to}."

    @gate.guard
    def delete_records(table: str, ids: list[int]) -> str:
        return f"Deleted {len(ids)} rows from {table}."

    return sent, send_email, delete_records


def test_approve_runs_the_tool_with_the_original_args(gate: Gate, store: Store) -> None:
    sent, send_email, _ = make_tools(gate)
    with gate.scope(thread_id="t-approve"), person_deciding(store, Approve()):
        reply = send_email(to="alice@example.com", subject="Hello")  # type: ignore[operator]
    assert sent == [{"to": "alice@example.com", "subject": "Hello"}]
    assert reply.content == "Email sent to alice@example.com."
    assert not reply.is_error
    assert reply.outcome.tool_execution_decision() == {
        "tool_name": "send_email",
        "execute": True,
        "tool_call_id": reply.outcome.tool_call_id,
        "feedback": None,
        "final_tool_params": {"to": "alice@example.com", "subject": "Hello"},
    }


def test_edit_runs_with_the_edited_args_and_tells_the_model(gate: Gate, store: Store) -> None:
    sent, send_email, _ = make_tools(gate)
    edit = Edit(args={"to": "bob@example.com", "subject": "Hello"}, comment="Bob handles this")
    with gate.scope(thread_id="t-edit"), person_deciding(store, edit):
        reply = send_email(to="alice@example.com", subject="Hello")  # type: ignore[operator]
    assert sent == [{"to": "bob@example.com", "subject": "Hello"}]
    assert reply.content == (
        "The parameters for tool 'send_email' were updated by the user to:\n"
        '{"to": "bob@example.com", "subject": "Hello"} With user feedback: Bob handles this'
        "\n\nEmail sent to bob@example.com."
    )
    assert reply.outcome.final_tool_params == {"to": "bob@example.com", "subject": "Hello"}
    assert not reply.is_error


def test_reject_does_not_run_and_returns_an_error_result(gate: Gate, store: Store) -> None:
    sent, send_email, _ = make_tools(gate)
    with (
        gate.scope(thread_id="t-reject"),
        person_deciding(store, Reject(message="Never email customers directly")),
    ):
        reply = send_email(to="alice@example.com", subject="Hello")  # type: ignore[operator]
    assert sent == []
    assert reply.is_error
    assert reply.content == (
        "Tool execution for 'send_email' was rejected by the user. "
        "With user feedback: Never email customers directly"
    )
    assert reply.outcome.execute is False
    assert reply.outcome.feedback == reply.content


def test_reject_without_a_reason(gate: Gate, store: Store) -> None:
    _, _, delete_records = make_tools(gate)
    with gate.scope(thread_id="t-reject-bare"), person_deciding(store, Reject()):
        reply = delete_records(table="users", ids=[1, 2])  # type: ignore[operator]
    assert reply.content == "Tool execution for 'delete_records' was rejected by the user."


def test_respond_answers_in_the_tools_place(gate: Gate, store: Store) -> None:
    sent, send_email, _ = make_tools(gate)
    answer = Respond(message="Alice already got this mail yesterday; don't resend.")
    with gate.scope(thread_id="t-respond"), person_deciding(store, answer):
        reply = send_email(to="alice@example.com", subject="Hello")  # type: ignore[operator]
    assert sent == []
    assert not reply.is_error
    assert reply.content == "Alice already got this mail yesterday; don't resend."
    assert reply.outcome.decision == "respond"


def test_a_disallowed_decision_is_refused_and_the_call_still_waits(gate: Gate, store: Store) -> None:
    _, _, delete_records = make_tools(gate)
    outcome: list[object] = []

    def agent() -> None:
        with gate.scope(thread_id="t-disallowed"):
            outcome.append(delete_records(table="users", ids=[1]))  # type: ignore[operator]

    import threading

    thread = threading.Thread(target=agent)
    thread.start()
    request = wait_for_pending(store)
    with pytest.raises(DecisionNotAllowed, match="'respond' is not allowed for this request"):
        store.decide(request.id, Respond(message="no"), actor="alice")
    with pytest.raises(DecisionNotAllowed):
        store.decide(request.id, Edit(args={"table": "users", "ids": []}), actor="alice")
    assert store.get_request(request.id).status is RequestStatus.PENDING
    assert thread.is_alive()
    store.decide(request.id, Approve(), actor="alice")
    thread.join(10)
    assert [reply.content for reply in outcome] == ["Deleted 1 rows from users."]  # type: ignore[attr-defined]


def test_an_edit_breaking_the_schema_is_refused_and_the_call_still_waits(gate: Gate, store: Store) -> None:
    sent, send_email, _ = make_tools(gate)
    replies: list[object] = []
    import threading

    def agent() -> None:
        with gate.scope(thread_id="t-bad-edit"):
            replies.append(send_email(to="alice@example.com", subject="Hello"))  # type: ignore[operator]

    thread = threading.Thread(target=agent)
    thread.start()
    request = wait_for_pending(store)
    assert request.args_schema is not None and request.args_schema["required"] == ["to", "subject"]
    with pytest.raises(InvalidArguments, match="subject is required"):
        store.decide(request.id, Edit(args={"to": "bob@example.com"}), actor="alice")
    with pytest.raises(InvalidArguments, match="subject: 42 is not of type 'string'"):
        store.decide(request.id, Edit(args={"to": "bob@example.com", "subject": 42}), actor="alice")
    assert store.get_request(request.id).status is RequestStatus.PENDING
    assert sent == []
    store.decide(request.id, Edit(args={"to": "bob@example.com", "subject": "Hi"}), actor="alice")
    thread.join(10)
    assert sent == [{"to": "bob@example.com", "subject": "Hi"}]


def test_async_tools_are_guarded_too(gate: Gate, store: Store) -> None:
    calls: list[str] = []

    @gate.guard(allowed_decisions=["approve", "reject"])
    async def transfer_money(account: str, cents: int) -> str:
        calls.append(account)
        await asyncio.sleep(0)
        return f"moved {cents} to {account}"

    async def agent() -> tuple[object, object]:
        with gate.scope(thread_id="t-async"):
            with person_deciding(store, Approve()):
                first = await transfer_money(account="acct-1", cents=500)
            with person_deciding(store, Reject(message="too much")):
                second = await transfer_money(account="acct-2", cents=10**9)
            return first, second

    first, second = asyncio.run(agent())
    assert calls == ["acct-1"]
    assert first.content == "moved 500 to acct-1"  # type: ignore[attr-defined]
    assert second.content == (  # type: ignore[attr-defined]
        "Tool execution for 'transfer_money' was rejected by the user. With user feedback: too much"
    )


def test_a_tool_that_needs_no_approval_just_runs(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RuleSet())

    @gate.guard(requires_approval=False)
    def search(query: str) -> str:
        return f"results for {query}"

    reply = search(query="refunds")
    assert reply.content == "results for refunds"
    assert reply.executed
    assert store.list_requests() == []
