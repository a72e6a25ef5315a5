"""Programmatic policies on top of the rules; AskOnce memory lives in the store."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff import (
    AlwaysAsk,
    Approve,
    AskOnce,
    AskOncePerTool,
    Backend,
    Gate,
    NeverAsk,
    Pending,
    Reject,
    RuleSet,
    Scope,
    Store,
    ToolCall,
)
from signoff.store import SQLiteStore

RULES = RuleSet.from_yaml(
    """
tools:
  send_email: {requires_approval: true}
  wipe: {requires_approval: true}
apps:
  prod: {hitl_required: [wipe]}
"""
)


def approve_if_pending(store: Store, gate: Gate, call: ToolCall, scope: Scope) -> bool:
    """Submit; if a person is asked, approve (as the requester, whose request it is when the rule
    names no approvers, or alice) and let the agent pick it up. True if anyone was asked."""
    found = gate.submit(call, scope)
    if isinstance(found, Pending):
        store.decide(found.request_id, Approve(), actor=scope.requester or "alice")
        assert gate.submit(call, scope).execute  # type: ignore[union-attr]
        return True
    return False


def email(to: str, n: int) -> ToolCall:
    return ToolCall(name="send_email", args={"to": to}, id=f"call-{n}")


def test_always_ask_asks_every_time(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RULES, policy=AlwaysAsk())
    scope = Scope(thread_id="t", agent="a")
    assert approve_if_pending(store, gate, email("x@example.com", 1), scope)
    assert approve_if_pending(store, gate, email("x@example.com", 2), scope)


def test_never_ask_silences_but_not_hitl_required(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RULES, policy=NeverAsk())
    assert not approve_if_pending(store, gate, email("x@example.com", 1), Scope(thread_id="t", app="prod"))
    wipe = ToolCall(name="wipe", args={}, id="w1")
    assert approve_if_pending(store, gate, wipe, Scope(thread_id="t", app="prod"))


def test_ask_once_remembers_approvals_across_restarts(sqlite_path: Path) -> None:
    scope = Scope(thread_id="t1", agent="support", requester="carol")
    store = SQLiteStore(sqlite_path)
    gate = Gate(store, rules=RULES, policy=AskOnce())
    assert approve_if_pending(store, gate, email("x@example.com", 1), scope)
    assert not approve_if_pending(store, gate, email("x@example.com", 2), scope)
    assert approve_if_pending(store, gate, email("y@example.com", 3), scope), "other args ask again"
    store.close()

    restarted = SQLiteStore(sqlite_path)
    gate = Gate(restarted, rules=RULES, policy=AskOnce())
    next_run = Scope(thread_id="t2", agent="support", requester="carol")
    assert not approve_if_pending(restarted, gate, email("x@example.com", 4), next_run), (
        "memory survived restart"
    )
    other_user = Scope(thread_id="t3", agent="support", requester="dave")
    assert approve_if_pending(restarted, gate, email("x@example.com", 5), other_user), "scoped per requester"
    restarted.close()


def test_ask_once_does_not_remember_rejections(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RULES, policy=AskOnce())
    scope = Scope(thread_id="t", agent="a")
    pending = gate.submit(email("x@example.com", 1), scope)
    assert isinstance(pending, Pending)
    store.decide(pending.request_id, Reject(), actor="alice")
    assert gate.review(email("x@example.com", 1), scope).status == "rejected"
    assert approve_if_pending(store, gate, email("x@example.com", 2), scope)


def test_ask_once_per_thread_when_asked(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RULES, policy=AskOnce(per=("thread_id",)))
    assert approve_if_pending(store, gate, email("x@example.com", 1), Scope(thread_id="t1"))
    assert not approve_if_pending(store, gate, email("x@example.com", 2), Scope(thread_id="t1"))
    assert approve_if_pending(store, gate, email("x@example.com", 3), Scope(thread_id="t2"))


def test_ask_once_per_tool_ignores_args(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RULES, policy=AskOncePerTool())
    scope = Scope(thread_id="t", agent="a")
    assert approve_if_pending(store, gate, email("x@example.com", 1), scope)
    assert not approve_if_pending(store, gate, email("y@example.com", 2), scope)
    assert approve_if_pending(store, gate, ToolCall(name="wipe", args={}, id="w"), scope)


def test_a_replayed_call_keeps_its_request_even_when_the_policy_would_not_ask(
    backend: Backend, store: Store
) -> None:
    """Exactly-once holds under AskOnce: the replay finds the stored result, the tool does not rerun."""
    gate = Gate(backend, rules=RULES, policy=AskOnce())
    scope = Scope(thread_id="t", agent="a")
    runs: list[str] = []
    call = email("x@example.com", 1)
    assert approve_if_pending(store, gate, call, scope)
    gate.run(call, lambda to: runs.append(to) or "sent", scope)
    replay = gate.run(call, lambda to: runs.append(to) or "sent", scope)
    assert runs == ["x@example.com"]
    assert replay.replayed


def test_unknown_scope_fields_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown scope fields"):
        AskOnce(per=("tenant",))
