"""Requests in the store, on SQLite and PostgreSQL: get-or-create, decisions, refusals, quorum, drafts."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from signoff import (
    AlreadyDecided,
    Approve,
    DecisionNotAllowed,
    Edit,
    InvalidArguments,
    NotAnApprover,
    Reject,
    RequestExpired,
    RequestNotFound,
    RequestNotReady,
    RequestStatus,
    Respond,
)
from signoff._util import utcnow
from signoff.requests import NewRequest
from signoff.rules.model import RequestRule
from signoff.store import SQLiteStore, Store

EMAIL_SCHEMA = {
    "type": "object",
    "properties": {"to": {"type": "string", "format": "email"}, "subject": {"type": "string"}},
    "required": ["to", "subject"],
    "additionalProperties": False,
}


def new_request(**overrides: Any) -> NewRequest:
    fields: dict[str, Any] = {
        "thread_id": "thread-1",
        "tool_call_id": "call-1",
        "tool_name": "send_email",
        "args": {"to": "alice@example.com", "subject": "hi"},
        "args_schema": EMAIL_SCHEMA,
        "description": "send a mail",
        "deadline": utcnow() + timedelta(hours=1),
        "rule": RequestRule(),
    }
    fields.update(overrides)
    return NewRequest(**fields)


def audit_actions(store: Store, request_id: str) -> list[str]:
    return [entry.action for entry in store.audit_entries(request_id=request_id)]


def test_same_key_returns_the_same_request(store: Store) -> None:
    first, created = store.create_request(new_request())
    again, created_again = store.create_request(new_request(args={"to": "other@example.com", "subject": "x"}))
    assert created and not created_again
    assert again.id == first.id
    assert again.args == {"to": "alice@example.com", "subject": "hi"}
    other, created_other = store.create_request(new_request(thread_id="thread-2"))
    assert created_other and other.id != first.id
    assert audit_actions(store, first.id) == ["request.created"]


def test_approve_records_actor_and_channel(store: Store) -> None:
    request, _ = store.create_request(new_request())
    decided = store.decide(request.id, Approve(comment="fine"), actor="alice", channel="cli")
    assert decided.status is RequestStatus.APPROVED
    assert decided.final_args == request.args
    assert decided.decision is not None
    assert (decided.decision.actor, decided.decision.channel) == ("alice", "cli")
    assert store.get_request(request.id).status is RequestStatus.APPROVED
    [record] = store.decisions(request.id)
    assert record.decision == Approve(comment="fine")
    assert audit_actions(store, request.id) == ["request.created", "request.decided"]


def test_the_first_decision_wins(store: Store) -> None:
    request, _ = store.create_request(new_request())
    store.decide(request.id, Reject(message="no"), actor="alice")
    with pytest.raises(AlreadyDecided, match="already rejected by alice"):
        store.decide(request.id, Approve(), actor="bob")
    current = store.get_request(request.id)
    assert current.status is RequestStatus.REJECTED
    assert current.decision is not None and current.decision.actor == "alice"
    assert len(store.decisions(request.id)) == 1


def test_a_disallowed_decision_is_refused_and_changes_nothing(store: Store) -> None:
    request, _ = store.create_request(new_request(rule=RequestRule(allowed_decisions=("approve", "reject"))))
    with pytest.raises(DecisionNotAllowed, match=r"'edit' is not allowed .*allowed: approve, reject"):
        store.decide(request.id, Edit(args={"to": "bob@example.com", "subject": "hi"}), actor="alice")
    assert store.get_request(request.id).status is RequestStatus.PENDING
    assert store.decisions(request.id) == []
    assert audit_actions(store, request.id) == ["request.created"]


def test_an_edit_breaking_the_schema_is_refused_and_changes_nothing(store: Store) -> None:
    request, _ = store.create_request(new_request())
    with pytest.raises(InvalidArguments, match="subject is required"):
        store.decide(request.id, Edit(args={"to": "bob@example.com"}), actor="alice")
    with pytest.raises(InvalidArguments, match="to: 'not-an-address' is not a 'email'"):
        store.decide(request.id, Edit(args={"to": "not-an-address", "subject": "x"}), actor="alice")
    with pytest.raises(InvalidArguments, match="Additional properties"):
        store.decide(
            request.id, Edit(args={"to": "b@example.com", "subject": "x", "bcc": "c"}), actor="alice"
        )
    assert store.get_request(request.id).status is RequestStatus.PENDING
    edited = store.decide(request.id, Edit(args={"to": "bob@example.com", "subject": "new"}), actor="alice")
    assert edited.status is RequestStatus.EDITED
    assert edited.final_args == {"to": "bob@example.com", "subject": "new"}
    assert edited.args == {"to": "alice@example.com", "subject": "hi"}


def test_only_approvers_decide_and_refusals_are_audited(store: Store) -> None:
    request, _ = store.create_request(new_request(rule=RequestRule(approvers=("alice", "group:ops"))))
    with pytest.raises(NotAnApprover, match="mallory is not an approver"):
        store.decide(request.id, Approve(), actor="mallory")
    assert store.get_request(request.id).status is RequestStatus.PENDING
    refused = [
        entry for entry in store.audit_entries(request_id=request.id) if entry.action == "decision.refused"
    ]
    assert [(entry.actor, entry.data["reason"]) for entry in refused] == [("mallory", "not an approver")]
    store.add_group_member("ops", "olga", actor="admin")
    assert store.decide(request.id, Approve(), actor="olga").status is RequestStatus.APPROVED


def test_visibility_follows_approvers(store: Store) -> None:
    mine, _ = store.create_request(new_request(tool_call_id="a", rule=RequestRule(approvers=("alice",))))
    anyones, _ = store.create_request(new_request(tool_call_id="b"))
    groups, _ = store.create_request(
        new_request(tool_call_id="c", rule=RequestRule(approvers=("group:ops",)))
    )
    store.add_group_member("ops", "olga", actor="admin")
    assert {r.id for r in store.list_requests(visible_to="alice")} == {mine.id, anyones.id}
    assert {r.id for r in store.list_requests(visible_to="olga")} == {anyones.id, groups.id}
    assert {r.id for r in store.list_requests(visible_to="mallory")} == {anyones.id}
    assert {r.id for r in store.list_requests()} == {mine.id, anyones.id, groups.id}


def test_list_filters_and_cursor(store: Store) -> None:
    ids = [
        store.create_request(new_request(tool_call_id=f"c{n}", agent="bot" if n % 2 else "other"))[0].id
        for n in range(5)
    ]
    store.decide(ids[0], Approve(), actor="alice")
    page = store.list_requests(limit=2)
    assert [r.id for r in page] == [ids[4], ids[3]]
    rest = store.list_requests(limit=10, cursor=page[-1].id)
    assert [r.id for r in rest] == [ids[2], ids[1], ids[0]]
    assert {r.id for r in store.list_requests(status="pending")} == set(ids[1:])
    assert {r.id for r in store.list_requests(status=["approved"])} == {ids[0]}
    assert {r.id for r in store.list_requests(agent="bot")} == {ids[1], ids[3]}
    assert store.list_requests(tool="nope") == []


def test_quorum_needs_distinct_approvers(store: Store) -> None:
    request, _ = store.create_request(new_request(rule=RequestRule(quorum=2)))
    after_one = store.decide(request.id, Approve(), actor="alice")
    assert after_one.status is RequestStatus.PENDING
    assert after_one.approvals == ("alice",)
    with pytest.raises(AlreadyDecided, match="alice has already approved"):
        store.decide(request.id, Approve(), actor="alice")
    with pytest.raises(DecisionNotAllowed, match="2 approvers must agree"):
        store.decide(request.id, Edit(args={"to": "b@example.com", "subject": "x"}), actor="bob")
    done = store.decide(request.id, Approve(), actor="bob")
    assert done.status is RequestStatus.APPROVED
    assert [entry.action for entry in store.audit_entries(request_id=request.id)] == [
        "request.created",
        "decision.vote",
        "request.decided",
    ]


def test_a_listing_shows_the_approvals_a_quorum_has(store: Store) -> None:
    """The inbox's quorum note and AG-UI's "not yet approved by them" read a listing's requests:
    they must hold the votes cast, as get_request's do."""
    quorum, _ = store.create_request(new_request(rule=RequestRule(quorum=2)))
    single, _ = store.create_request(new_request(tool_call_id="call-2"))
    store.decide(quorum.id, Approve(), actor="alice")
    listed = {request.id: request for request in store.list_requests(status="pending")}
    assert listed[quorum.id].approvals == ("alice",) == store.get_request(quorum.id).approvals
    assert listed[single.id].approvals == ()
    inbox = {request.id: request for request in store.list_requests(status="pending", visible_to="alice")}
    assert inbox[quorum.id].approvals == ("alice",)


def test_any_reject_rejects_a_quorum(store: Store) -> None:
    request, _ = store.create_request(new_request(rule=RequestRule(quorum=3)))
    store.decide(request.id, Approve(), actor="alice")
    rejected = store.decide(request.id, Reject(message="not today"), actor="bob")
    assert rejected.status is RequestStatus.REJECTED


def test_drafts_refuse_decisions_until_ready(store: Store) -> None:
    request, _ = store.create_request(new_request(args={"to": "alice@example.com"}, drafting=True))
    assert request.status is RequestStatus.DRAFTING
    with pytest.raises(RequestNotReady, match="still drafting"):
        store.decide(request.id, Approve(), actor="alice")
    partial = store.update_draft(request.id, args={"subject": "hel"})
    assert partial.status is RequestStatus.DRAFTING
    assert partial.args == {"to": "alice@example.com", "subject": "hel"}
    ready = store.update_draft(request.id, args={"subject": "hello"}, ready=True)
    assert ready.status is RequestStatus.PENDING
    assert ready.args["subject"] == "hello"
    assert store.decide(request.id, Approve(), actor="alice").status is RequestStatus.APPROVED
    with pytest.raises(AlreadyDecided):
        store.update_draft(request.id, args={"subject": "late"})


def test_past_the_deadline_a_decision_expires_the_request(store: Store) -> None:
    request, _ = store.create_request(new_request(deadline=utcnow() - timedelta(seconds=1)))
    with pytest.raises(RequestExpired):
        store.decide(request.id, Approve(), actor="alice")
    assert store.get_request(request.id).status is RequestStatus.EXPIRED
    with pytest.raises(RequestExpired):
        store.decide(request.id, Approve(), actor="alice")
    assert audit_actions(store, request.id) == ["request.created", "request.expired"]


def test_expire_due_expires_only_overdue_open_requests(store: Store) -> None:
    overdue, _ = store.create_request(
        new_request(tool_call_id="late", deadline=utcnow() - timedelta(seconds=1))
    )
    decided, _ = store.create_request(
        new_request(tool_call_id="done", deadline=utcnow() + timedelta(seconds=1))
    )
    store.decide(decided.id, Approve(), actor="alice")
    fresh, _ = store.create_request(new_request(tool_call_id="fresh"))
    expired = store.expire_due()
    assert [r.id for r in expired] == [overdue.id]
    assert store.get_request(fresh.id).status is RequestStatus.PENDING
    assert store.expire_due() == []


def test_a_sweep_with_nothing_due_takes_no_write_transaction(sqlite_store: SQLiteStore) -> None:
    sqlite_store.create_request(new_request(tool_call_id="fresh"))
    commits = sqlite_store.commits
    assert sqlite_store.expire_due() == []
    assert sqlite_store.commits == commits  # the sweeper, every interval, never holds the writers' lock


def test_cancel_ends_open_requests_only(store: Store) -> None:
    first, _ = store.create_request(new_request(tool_call_id="one"))
    second, _ = store.create_request(new_request(tool_call_id="two"))
    store.decide(second.id, Approve(), actor="alice")
    assert store.cancel_thread("thread-1", actor="agent", reason="run aborted") == 1
    cancelled = store.get_request(first.id)
    assert cancelled.status is RequestStatus.CANCELLED
    assert cancelled.resolution is not None and cancelled.resolution["reason"] == "run aborted"
    with pytest.raises(AlreadyDecided, match="was cancelled"):
        store.decide(first.id, Approve(), actor="alice")
    assert store.get_request(second.id).status is RequestStatus.APPROVED


def test_respond_with_a_structured_answer_is_validated(store: Store) -> None:
    request, _ = store.create_request(
        new_request(
            kind="input",
            tool_name="signoff.ask",
            args={"question": "How many?"},
            args_schema=None,
            answer_schema={"type": "integer", "minimum": 1},
            rule=RequestRule(allowed_decisions=("respond", "reject")),
        )
    )
    with pytest.raises(
        InvalidArguments, match=r"answer does not match the schema: .*0 is less than the minimum of 1"
    ):
        store.decide(request.id, Respond(value=0), actor="alice")
    with pytest.raises(InvalidArguments, match="is not of type 'integer'"):
        store.decide(request.id, Respond(message="three"), actor="alice")
    assert store.get_request(request.id).status is RequestStatus.PENDING
    answered = store.decide(request.id, Respond(value=3), actor="alice")
    assert answered.decision is not None and answered.decision.decision == Respond(value=3)


def test_unknown_ids_are_clear_errors(store: Store) -> None:
    with pytest.raises(RequestNotFound, match="no request with id 'req_nope'"):
        store.get_request("req_nope")
    with pytest.raises(RequestNotFound):
        store.decide("req_nope", Approve(), actor="alice")
    with pytest.raises(RequestNotFound):
        store.cancel("req_nope", actor="alice")


def test_serialized_requests_never_show_redacted_args(store: Store) -> None:
    request, _ = store.create_request(
        new_request(
            args_schema=None,
            args={"to": "a@example.com", "token": "s3cret"},
            rule=RequestRule(redact=("token",)),
        )
    )
    edited = store.decide(
        request.id, Edit(args={"to": "b@example.com", "token": "n3w-s3cret"}), actor="alice"
    )
    for shown in (edited.to_dict(), store.get_request(request.id).to_dict()):
        text = str(shown)
        assert "s3cret" not in text
        assert shown["args"]["token"] == "***"
        assert shown["final_args"]["token"] == "***"
    assert store.get_request(request.id).final_args == {"to": "b@example.com", "token": "n3w-s3cret"}


def test_concurrent_writers_share_commits_and_each_sees_its_own_result(sqlite_store: Store) -> None:
    """SQLite's group commit: a burst of writers from many threads all land, each returns only
    once its write is committed (another connection sees it), and a writer whose transaction
    fails takes nobody else's work with it."""
    import sqlite3
    import threading

    from signoff.store import SQLiteStore

    assert isinstance(sqlite_store, SQLiteStore)
    decided, _ = sqlite_store.create_request(new_request(tool_call_id="decided-one"))
    sqlite_store.decide(decided.id, Approve(), actor="alice")
    before = sqlite_store.commits
    outside = sqlite3.connect(sqlite_store.path, check_same_thread=False)
    problems: list[str] = []
    refusals: list[str] = []

    def create(worker: int) -> None:
        for n in range(15):
            request, created = sqlite_store.create_request(new_request(tool_call_id=f"w{worker}-{n}"))
            row = outside_lookup(request.id)
            if not created or row != "pending":
                problems.append(f"{request.id}: created={created}, seen outside as {row}")

    lock = threading.Lock()

    def outside_lookup(request_id: str) -> str | None:
        with lock:
            found = outside.execute("SELECT status FROM requests WHERE id = ?", (request_id,)).fetchone()
        return found[0] if found else None

    def fail(worker: int) -> None:
        for _ in range(15):
            try:
                sqlite_store.update_draft(decided.id, args={"x": worker})
            except AlreadyDecided as exc:
                refusals.append(exc.message)

    threads = [threading.Thread(target=create, args=(n,)) for n in range(8)]
    threads += [threading.Thread(target=fail, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    outside.close()
    assert problems == []
    assert len(refusals) == 60
    assert len(sqlite_store.list_requests(limit=1000)) == 8 * 15 + 1
    assert 0 < sqlite_store.commits - before <= 8 * 15
    assert sqlite_store.verify_audit().ok
    assert sqlite_store.get_request(decided.id).args == decided.args


def test_overview_counts_cover_only_what_the_viewer_may_see(store: Store) -> None:
    mine, _ = store.create_request(new_request(tool_call_id="a", rule=RequestRule(approvers=("alice",))))
    store.create_request(
        new_request(tool_call_id="b", tool_name="wire_money", rule=RequestRule(approvers=("bob",)))
    )
    store.create_request(new_request(tool_call_id="c", tool_name="search"))
    assert sorted(tool for tool, _, _ in store.open_counts()) == ["search", "send_email", "wire_money"]
    assert sorted(tool for tool, _, _ in store.open_counts(visible_to="alice")) == ["search", "send_email"]
    store.decide(mine.id, Approve(), actor="alice")
    assert len(store.decided_since(timedelta(days=1), visible_to="alice")) == 1
    assert store.decided_since(timedelta(days=1), visible_to="bob") == []
