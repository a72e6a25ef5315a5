"""SQLite's `decide` reads the request on the writer's connection, inside its write transaction
(`RequestDecisions._decide_in_one_write`): it sees what other connections committed, a refused
decision there changes nothing and takes the checked path (refused, audited), and a failed one
leaves the store writable."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff import AlreadyDecided, Approve, NotAnApprover, Reject, RequestNotFound, RequestStatus
from signoff.rules.model import RequestRule
from signoff.store import SQLiteStore
from tests.test_store_requests import audit_actions, new_request


def test_a_decision_sees_what_another_connection_decided(sqlite_path: Path) -> None:
    first, second = SQLiteStore(sqlite_path), SQLiteStore(sqlite_path)
    try:
        request, _ = first.create_request(new_request(rule=RequestRule(approvers=("alice", "bob"))))
        assert first.get_request(request.id).status is RequestStatus.PENDING  # this thread has read it
        second.decide(request.id, Approve(), actor="bob")
        with pytest.raises(AlreadyDecided, match="approved by bob"):
            first.decide(request.id, Reject(message="no"), actor="alice")
        assert first.get_request(request.id).status is RequestStatus.APPROVED
        assert audit_actions(first, request.id) == ["request.created", "request.decided"]
    finally:
        first.close()
        second.close()


def test_a_refused_decision_in_a_group_is_audited_and_keeps_the_groups_writes(
    sqlite_store: SQLiteStore,
) -> None:
    rule = RequestRule(approvers=("alice",))
    with sqlite_store.grouped():
        kept, _ = sqlite_store.create_request(new_request(tool_call_id="kept", rule=rule))
        refused, _ = sqlite_store.create_request(new_request(tool_call_id="refused", rule=rule))
        with pytest.raises(NotAnApprover):
            sqlite_store.decide(refused.id, Approve(), actor="mallory")
        decided = sqlite_store.decide(kept.id, Approve(), actor="alice")
    assert decided.status is RequestStatus.APPROVED
    assert sqlite_store.get_request(kept.id).status is RequestStatus.APPROVED
    assert sqlite_store.get_request(refused.id).status is RequestStatus.PENDING
    assert audit_actions(sqlite_store, refused.id) == ["request.created", "decision.refused"]


def test_deciding_a_missing_request_leaves_the_store_writable(sqlite_store: SQLiteStore) -> None:
    with pytest.raises(RequestNotFound, match="req_nope"):
        sqlite_store.decide("req_nope", Approve(), actor="alice")
    assert not sqlite_store._connection.in_transaction
    request, _ = sqlite_store.create_request(new_request())
    decided = sqlite_store.decide(request.id, Approve(), actor="local")
    assert decided.status is RequestStatus.APPROVED
    assert sqlite_store.get_request(request.id) == decided
