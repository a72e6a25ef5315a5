"""Approvals bound to their arguments (issue 20 §6): an execution claim carries the digest of the
args it will run with, and a claim whose digest is not that of the decided args is refused and
audited; `audit verify` checks every run's digest against its decision."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest

from signoff import Approve, ArgsMismatch, Edit, Gate, RuleSet, Scope, Store, ToolCall, args_digest
from signoff.execution import decided_args
from tests.live import LiveServer

RULES = RuleSet.from_yaml("tools: {transfer: {requires_approval: true, approvers: [alice]}}")
LEASE = timedelta(minutes=1)


def ask(store: Store, args: dict[str, Any], call: str = "c1") -> str:
    pending = Gate(store, rules=RULES).submit(
        ToolCall(name="transfer", args=args, id=call), Scope(thread_id="t")
    )
    return pending.request_id  # type: ignore[union-attr]


def actions(store: Store, request_id: str) -> list[str]:
    return [entry.action for entry in store.audit_entries(request_id=request_id)]


def test_the_digest_is_of_the_canonical_args() -> None:
    assert args_digest({"a": 1, "b": [1, 2]}) == args_digest({"b": [1, 2], "a": 1})
    assert args_digest({"a": 1}) != args_digest({"a": 2})
    assert args_digest({}).startswith("sha256:") and len(args_digest({})) == len("sha256:") + 64


def test_a_claim_with_other_args_is_refused_audited_and_changes_nothing(store: Store) -> None:
    request_id = ask(store, {"to": "bob", "amount": 10})
    store.decide(request_id, Approve(), actor="alice")
    other = args_digest({"to": "mallory", "amount": 10_000})
    with pytest.raises(ArgsMismatch, match="decided with other args than this claim would run") as refused:
        store.claim_execution(request_id, lease=LEASE, args_digest=other)
    assert refused.value.status_code == 409
    assert store.get_execution(request_id) is None
    [entry] = [e for e in store.audit_entries(request_id=request_id) if e.action == "execution.refused"]
    assert entry.data["args_digest"] == other
    assert entry.data["decided_args_digest"] == args_digest({"to": "bob", "amount": 10})
    claim = store.claim_execution(
        request_id, lease=LEASE, args_digest=args_digest({"to": "bob", "amount": 10})
    )
    assert claim.kind == "claimed"
    started = [e for e in store.audit_entries(request_id=request_id) if e.action == "execution.started"]
    assert [e.data["args_digest"] for e in started] == [args_digest({"amount": 10, "to": "bob"})]


def test_after_an_edit_only_the_edited_args_may_run(store: Store) -> None:
    request_id = ask(store, {"to": "bob", "amount": 10})
    store.decide(request_id, Edit(args={"to": "bob", "amount": 5}), actor="alice")
    with pytest.raises(ArgsMismatch):
        store.claim_execution(request_id, lease=LEASE, args_digest=args_digest({"to": "bob", "amount": 10}))
    assert store.claim_execution(
        request_id, lease=LEASE, args_digest=args_digest({"to": "bob", "amount": 5})
    ).token


def test_an_edit_to_no_args_runs_with_no_args(store: Store) -> None:
    """The decided args are the edit's even when it is empty (it used to fall back to the asked args)."""
    ran: list[dict[str, Any]] = []
    gate = Gate(store, rules=RULES)
    call = ToolCall(name="transfer", args={"to": "bob"}, id="c-empty")
    pending = gate.submit(call, Scope(thread_id="t"))
    store.decide(pending.request_id, Edit(args={}), actor="alice")  # type: ignore[union-attr]
    reply = gate.run(call, lambda **kw: ran.append(kw), scope=Scope(thread_id="t"))
    assert reply.executed and ran == [{}]
    assert decided_args(store.get_request(pending.request_id)) == {}  # type: ignore[union-attr]


def test_the_gate_runs_what_was_decided_locally_and_remotely(backend: Any, store: Store) -> None:
    from tests.helpers import person_deciding

    ran: list[dict[str, Any]] = []
    gate = Gate(backend, rules=RULES)
    with person_deciding(store, Edit(args={"to": "bob", "amount": 1})):
        reply = gate.run(
            ToolCall(name="transfer", args={"to": "bob", "amount": 99}, id="c2"),
            lambda **kw: ran.append(kw) or "done",
            scope=Scope(thread_id="t2"),
        )
    assert reply.executed and ran == [{"to": "bob", "amount": 1}]
    [request] = store.list_requests(thread_id="t2")
    assert actions(store, request.id)[-2:] == ["execution.started", "execution.succeeded"]
    assert store.verify_audit().ok


def test_the_api_requires_the_digest_and_refuses_another(store: Store) -> None:
    from signoff import Client

    with LiveServer(store) as server:
        token = server.user("bot", role="agent")
        with Client(server.url, token) as client:
            request_id = ask(client, {"to": "bob", "amount": 10})  # type: ignore[arg-type]
        store.decide(request_id, Approve(), actor="alice")
        with server.client(token) as agent:
            url = f"/v1/requests/{request_id}/execution"
            missing = agent.post(url, json={"action": "claim"})
            assert missing.status_code == 422
            assert "claim needs args_digest" in missing.json()["error"]["message"]
            wrong = agent.post(url, json={"action": "claim", "args_digest": args_digest({"to": "eve"})})
            assert wrong.status_code == 409, wrong.text
            assert wrong.json()["error"]["type"] == "ArgsMismatch"
            right = {"action": "claim", "args_digest": args_digest({"to": "bob", "amount": 10})}
            claimed = agent.post(url, json=right)
            assert claimed.status_code == 200 and claimed.json()["kind"] == "claimed"
        page = httpx.get(
            f"{server.url}/requests/{request_id}", headers={"Authorization": f"Bearer {server.user('alice')}"}
        )
    assert page.status_code == 200
    assert args_digest({"to": "bob", "amount": 10}) in page.text
    assert actions(store, request_id).count("execution.refused") == 1


def test_verify_finds_a_run_whose_args_are_not_the_decided_ones(sqlite_store: Store) -> None:
    import sqlite3

    request_id = ask(sqlite_store, {"to": "bob", "amount": 10})
    sqlite_store.decide(request_id, Approve(), actor="alice")
    sqlite_store.claim_execution(
        request_id, lease=LEASE, args_digest=args_digest({"to": "bob", "amount": 10})
    )
    assert sqlite_store.verify_audit().ok
    with sqlite3.connect(sqlite_store.path) as connection:  # type: ignore[attr-defined]
        connection.execute(
            "UPDATE requests SET args = ?, final_args = ? WHERE id = ?",
            ('{"to": "mallory", "amount": 10}', '{"to": "mallory", "amount": 10}', request_id),
        )
    problems = [problem.problem for problem in sqlite_store.verify_audit().problems]
    assert any("this run started with args (digest" in problem for problem in problems), problems
