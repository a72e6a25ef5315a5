"""The outbox and its delivery worker, over a real server: notices routed by the rule to the
approvers' addresses, updated once to the final state; webhooks signed per Standard Webhooks
(checked with the `standardwebhooks` library), retried with backoff until they arrive, once per
id; a hung receiver delays nobody else; rows commit with the change or not at all."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from standardwebhooks import Webhook as Verifier

from signoff import Approve, NotAnApprover, Reject
from signoff._util import utcnow
from signoff.channels import ChannelRegistry
from signoff.channels.recording import RecordingChannel
from signoff.execution import current_owner
from signoff.outbox import OutboxSettings, RetryPolicy
from signoff.requests import NewRequest
from signoff.rules.effective import RequestRule
from signoff.server import ServerSettings
from signoff.store import Store
from tests.helpers import decided_digest

from .live import LiveServer
from .receivers import Receiver
from .test_inbox import Person

QUICK = ServerSettings(sweep_interval=0.1, outbox=OutboxSettings(poll=0.05, retry=RetryPolicy.quick()))


def ask(store: Store, call: str = "c1", runner: dict[str, Any] | None = None, **rule: object) -> str:
    new = NewRequest(
        runner=runner,
        thread_id="thread-9",
        tool_call_id=call,
        tool_name="send_email",
        args={"to": "bob@example.com", "token": "s3cret"},
        description="Send a mail to bob",
        deadline=utcnow() + timedelta(hours=1),
        requester=rule.pop("requester", "bob"),  # type: ignore[arg-type]
        rule=RequestRule(redact=("token",), **rule),  # type: ignore[arg-type]
    )
    return store.create_request(new)[0].id


def wait_until(check: object, timeout: float = 15.0) -> None:
    give_up = time.monotonic() + timeout
    while time.monotonic() < give_up:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.02)
    raise AssertionError("timed out waiting")


@pytest.fixture
def people(store: Store) -> Store:
    for name in ("alice", "bob"):
        store.add_user(name, role="member", actor="test")
    store.set_address("alice", "recording", "U-ALICE", actor="test")
    return store


@pytest.fixture
def chat() -> RecordingChannel:
    return RecordingChannel("chat")


@pytest.fixture
def server(people: Store, chat: RecordingChannel) -> Iterator[LiveServer]:
    registry = ChannelRegistry()
    registry.add(chat)
    with LiveServer(people, QUICK, channels=registry) as live:
        yield live


def test_a_notice_reaches_the_approver_and_is_updated_once_to_the_final_state(
    server: LiveServer, chat: RecordingChannel
) -> None:
    store = server.store
    request_id = ask(store, approvers=("alice",), channels=("inbox", "chat"))
    wait_until(lambda: len(chat.recorded) == 1)
    sent = chat.recorded[0]
    assert (sent.action, sent.target) == ("send", "U-ALICE")
    assert sent.notice is not None and sent.notice.approver == "alice"
    assert sent.notice.args["token"] == "***"
    assert sent.notice.link is not None and "/h/so_hdl_" in sent.notice.link
    assert store.handle_of(sent.notice.link.rsplit("/", 1)[1]) is not None
    store.decide(request_id, Reject(message="no"), actor="alice")
    wait_until(lambda: len(chat.recorded) == 2)
    update = chat.recorded[1]
    assert update.action == "update" and update.ref == sent.ref
    assert update.notice is not None and update.notice.final is not None
    assert update.notice.final.text == "❌ Rejected by alice"
    time.sleep(0.3)
    assert len(chat.recorded) == 2
    log = [(a.message, a.target, a.outcome) for a in store.delivery_attempts(request_id)]
    assert log == [("notice", "U-ALICE", "sent"), ("update", "U-ALICE", "sent")]
    assert [(d.channel, d.target, d.outcome) for d in store.deliveries_for(request_id)] == [
        ("chat", "U-ALICE", "sent")
    ]


def test_a_person_without_an_address_is_a_visible_dead_letter(
    server: LiveServer, chat: RecordingChannel
) -> None:
    store = server.store
    request_id = ask(store, approvers=("bob",), channels=("chat",))
    wait_until(lambda: any(row.state == "dead" for row in store.outbox_for(request_id)))
    [attempt] = store.delivery_attempts(request_id)
    assert attempt.outcome == "failed"
    assert "bob has no recording address" in (attempt.error or "")
    assert [row.id for row in store.dead_letters()] == [store.outbox_for(request_id)[0].id]
    assert chat.recorded == []
    bob = Person(server, "bob")
    try:
        page = bob.client.get(f"/requests/{request_id}").text
    finally:
        bob.close()
    assert "dead letter" in page and "bob has no recording address" in page
    metrics = httpx.get(f"{server.url}/metrics").text
    assert 'signoff_outbox{channel="chat",state="dead"} 1.0' in metrics


def test_a_failing_channel_is_retried_and_the_log_shows_each_attempt(
    server: LiveServer, chat: RecordingChannel
) -> None:
    chat.fail = 2
    store = server.store
    request_id = ask(store, approvers=("alice",), channels=("chat",))
    wait_until(lambda: len(chat.recorded) == 1)
    wait_until(lambda: len(store.delivery_attempts(request_id)) == 3)
    results = [a.outcome for a in store.delivery_attempts(request_id)]
    assert results == ["retrying", "retrying", "sent"]
    assert [a.attempt for a in store.delivery_attempts(request_id)] == [1, 2, 3]
    [line] = store.deliveries_for(request_id)
    assert (line.outcome, line.attempts) == ("sent", 3)


def test_webhooks_are_signed_retried_and_arrive_once_by_id(server: LiveServer) -> None:
    store = server.store
    with Receiver(fail=3) as receiver:
        webhook, secret = store.add_webhook(
            receiver.url, events=["request.decided"], allow_private=True, actor="test"
        )
        request_id = ask(store, call="c2")  # no approvers named: bob's, its requester
        store.decide(request_id, Approve(comment="ok"), actor="bob")
        [got] = receiver.wait_for(1)
        time.sleep(0.3)
        assert len(receiver.delivered) == 1
        assert len(receiver.posts) == 4
        assert len({post.headers["webhook-id"] for post in receiver.posts}) == 1
        assert len({post.body for post in receiver.posts}) == 1
    event = Verifier(secret).verify(got.body, got.headers)
    assert event["type"] == "request.decided"
    assert event["data"]["request"]["id"] == request_id
    assert event["data"]["request"]["status"] == "approved"
    assert event["data"]["request"]["args"]["token"] == "***"
    attempts = store.delivery_attempts(request_id)
    assert [(a.channel, a.target, a.message, a.outcome) for a in attempts] == [
        ("webhook", webhook.id, "request.decided", "retrying"),
        ("webhook", webhook.id, "request.decided", "retrying"),
        ("webhook", webhook.id, "request.decided", "retrying"),
        ("webhook", webhook.id, "request.decided", "sent"),
    ]
    assert all("503" in (a.error or "") for a in attempts[:3])


def test_every_secret_signs_during_a_rotation(server: LiveServer) -> None:
    store = server.store
    with Receiver() as receiver:
        webhook, old = store.add_webhook(
            receiver.url, events=["request.created"], allow_private=True, actor="test"
        )
        new = store.rotate_webhook_secret(webhook.id, actor="test")
        ask(store, call="c3")
        [got] = receiver.wait_for(1)
    assert got.headers["webhook-signature"].count("v1,") == 2
    for secret in (old, new):
        assert Verifier(secret).verify(got.body, got.headers)["type"] == "request.created"
    tampered = got.body.replace(b"request.created", b"request.decided")
    with pytest.raises(Exception, match="No matching signature"):
        Verifier(new).verify(tampered, got.headers)


def test_a_hung_receiver_does_not_delay_another(server: LiveServer) -> None:
    store = server.store
    hold = threading.Event()
    with Receiver(hold=hold) as hung, Receiver() as fine:
        store.add_webhook(hung.url, events=["request.created"], allow_private=True, actor="test")
        store.add_webhook(fine.url, events=["request.created"], allow_private=True, actor="test")
        for index in range(5):
            ask(store, call=f"h{index}")
        assert len(fine.wait_for(5)) == 5
        assert hung.delivered == []  # still held: the fine one did not wait for it
        hold.set()
        assert len(hung.wait_for(5)) == 5


def test_the_requester_decides_when_the_rule_says_so(server: LiveServer, chat: RecordingChannel) -> None:
    store = server.store
    store.set_address("bob", "recording", "U-BOB", actor="test")
    request_id = ask(store, call="r1", approvers=("requester",), channels=("chat",))
    request = store.get_request(request_id)
    assert request.approvers == ("bob",)
    wait_until(lambda: len(chat.recorded) == 1)
    assert chat.recorded[0].target == "U-BOB"
    with pytest.raises(NotAnApprover):
        store.decide(request_id, Approve(), actor="alice")
    assert store.decide(request_id, Approve(), actor="bob").status.value == "approved"


def test_no_requester_means_nobody_decides(people: Store) -> None:
    request_id = ask(people, call="r2", approvers=("requester",), requester=None)
    assert people.get_request(request_id).approvers == ("requester:unknown",)
    for person in ("alice", "bob"):
        with pytest.raises(NotAnApprover):
            people.decide(request_id, Approve(), actor=person)


def test_outbox_rows_commit_with_the_change_or_not_at_all(people: Store) -> None:
    """A decision whose transaction fails (here a trigger refuses its audit entry) leaves the
    request pending and no outbox row behind."""
    webhook, _ = people.add_webhook(
        "http://127.0.0.1:9/x", events=["request.decided"], allow_private=True, actor="test"
    )
    request_id = ask(people, call="t1", approvers=("alice",), channels=("chat",))
    before = [(row.message, row.channel) for row in people.outbox_for(request_id)]
    assert before == [("notice", "chat")]
    _refuse_decided_audit(people)
    with pytest.raises(Exception, match="refused on purpose"):
        people.decide(request_id, Approve(), actor="alice")
    assert people.get_request(request_id).status.value == "pending"
    assert [(row.message, row.channel) for row in people.outbox_for(request_id)] == before
    assert webhook.id


def _refuse_decided_audit(store: Store) -> None:
    from signoff.store import SQLiteStore

    if isinstance(store, SQLiteStore):
        import sqlite3

        connection = sqlite3.connect(store.path)
        connection.execute(
            "CREATE TRIGGER refuse_decided BEFORE INSERT ON audit_log WHEN NEW.action = 'request.decided' "
            "BEGIN SELECT RAISE(ABORT, 'refused on purpose'); END"
        )
        connection.commit()
        connection.close()
        return
    import psycopg

    from .conftest import POSTGRES_DSN

    assert POSTGRES_DSN is not None
    schema = store.schema  # type: ignore[attr-defined]
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as connection:
        connection.execute(f"SET search_path TO {schema}")
        connection.execute(
            "CREATE FUNCTION refuse_decided() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "IF NEW.action = 'request.decided' THEN RAISE EXCEPTION 'refused on purpose'; END IF; "
            "RETURN NEW; END $$"
        )
        connection.execute(  # PostgreSQL queues a write's entries in its transaction; sealed later
            "CREATE TRIGGER refuse_decided BEFORE INSERT ON audit_queue "
            "FOR EACH ROW EXECUTE FUNCTION refuse_decided()"
        )


def test_expiry_and_cancel_update_the_cards_and_tell_the_webhooks(
    server: LiveServer, chat: RecordingChannel
) -> None:
    store = server.store
    with Receiver() as receiver:
        _, secret = store.add_webhook(
            receiver.url, events=["request.expired", "request.cancelled"], allow_private=True, actor="test"
        )
        cancelled = ask(store, call="x1", approvers=("alice",), channels=("chat",))
        expiring = store.create_request(
            NewRequest(
                thread_id="thread-9",
                tool_call_id="x2",
                tool_name="pay",
                args={},
                description="Pay",
                deadline=utcnow() + timedelta(seconds=1),
                rule=RequestRule(approvers=("alice",), channels=("chat",)),
            )
        )[0].id
        wait_until(lambda: len(chat.recorded) == 2)
        store.cancel(cancelled, actor="bot", reason="run aborted")
        got = receiver.wait_for(2)  # the sweeper expires the other
        types = sorted(Verifier(secret).verify(post.body, post.headers)["type"] for post in got)
    assert types == ["request.cancelled", "request.expired"]
    wait_until(lambda: len([entry for entry in chat.recorded if entry.action == "update"]) == 2)
    finals = {
        entry.notice.request_id: entry.notice.final.text
        for entry in chat.recorded
        if entry.action == "update" and entry.notice is not None and entry.notice.final is not None
    }
    assert finals == {cancelled: "🚫 Cancelled by bot", expiring: "⌛ Expired"}


@pytest.mark.parametrize("waited", [False, True], ids=["claimed", "waited-for"])
def test_an_execution_is_followed_up_and_its_events_sent(
    server: LiveServer, chat: RecordingChannel, waited: bool
) -> None:
    """`waited`: the request was made by a process waiting to run it, whose execution is
    recorded from the start: the claim takes that record (PostgreSQL: one statement)."""
    store = server.store
    with Receiver() as receiver:
        store.add_webhook(
            receiver.url, events=["execution.started", "execution.finished"], allow_private=True, actor="test"
        )
        runner = current_owner() if waited else None
        request_id = ask(store, call="e1", runner=runner, approvers=("alice",), channels=("chat",))
        wait_until(lambda: len(chat.recorded) == 1)
        store.decide(request_id, Approve(), actor="alice")
        claim = store.claim_execution(
            request_id, args_digest=decided_digest(store, request_id), lease=timedelta(minutes=1)
        )
        assert claim.token is not None
        store.finish_execution(request_id, claim.token, succeeded=False, error="SMTP said no")
        got = receiver.wait_for(2)
    events = sorted(json.loads(post.body)["type"] for post in got)
    assert events == ["execution.finished", "execution.started"]
    finished = next(json.loads(post.body) for post in got if b"execution.finished" in post.body)
    assert finished["data"]["execution"]["status"] == "failed"
    wait_until(lambda: any(entry.action == "follow_up" for entry in chat.recorded))
    [follow] = [entry for entry in chat.recorded if entry.action == "follow_up"]
    assert follow.follow_up is not None
    assert follow.follow_up.text == "❌ send_email failed: SMTP said no"
    assert follow.ref == chat.recorded[0].ref


def test_a_draft_is_announced_when_it_becomes_pending(people: Store) -> None:
    new = NewRequest(
        thread_id="thread-9",
        tool_call_id="d1",
        tool_name="send_email",
        args={"to": "bob@example.com"},
        description="Send a mail",
        deadline=utcnow() + timedelta(hours=1),
        rule=RequestRule(approvers=("alice",), channels=("chat",)),
        drafting=True,
    )
    request_id = people.create_request(new)[0].id
    assert people.outbox_for(request_id) == []
    people.update_draft(request_id, args={"subject": "hi"}, ready=True)
    assert [(row.message, row.channel, row.recipient) for row in people.outbox_for(request_id)] == [
        ("notice", "chat", "alice")
    ]


def test_the_worker_is_woken_by_this_processs_commits_without_a_change_watcher(
    people: Store, chat: RecordingChannel
) -> None:
    """Other processes' rows come at the next poll (here never, within the test): a notice of a
    commit made here is sent at once all the same, and no watcher of other processes' changes
    was started for the worker (on SQLite it would read the log after each commit)."""
    registry = ChannelRegistry()
    registry.add(chat)
    slow_poll = ServerSettings(sweep_interval=0.1, outbox=OutboxSettings(poll=60, retry=RetryPolicy.quick()))
    with LiveServer(people, slow_poll, channels=registry):
        for sent, call in enumerate(("w1", "w2"), start=1):
            ask(people, call, approvers=("alice",), channels=("inbox", "chat"))
            wait_until(lambda sent=sent: len(chat.recorded) == sent, timeout=10)
        assert people.hub.sources == []  # SQLite's watcher attaches itself; PostgreSQL's listener does not
