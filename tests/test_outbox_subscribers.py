"""A write with nobody to tell skips the outbox's event statement (SQLite remembers which events
enabled webhooks want); a webhook added, enabled or changed — by this store, another store on
the same file, or another process — gets the events of every write after it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import timedelta

from signoff import Approve
from signoff._util import utcnow
from signoff.requests import NewRequest
from signoff.rules.effective import RequestRule
from signoff.store import SQLiteStore, Store

URL = "http://127.0.0.1:9/hook"


def ask(store: Store, call: str, **rule: object) -> str:
    new = NewRequest(
        thread_id="thread-subscribers",
        tool_call_id=call,
        tool_name="send_email",
        args={"to": "bob@example.com"},
        description="Send a mail to bob",
        deadline=utcnow() + timedelta(hours=1),
        rule=RequestRule(**rule),  # type: ignore[arg-type]
    )
    return store.create_request(new)[0].id


def cycle(store: Store, call: str, **rule: object) -> str:
    request_id = ask(store, call, **rule)
    store.decide(request_id, Approve(), actor="alice")
    return request_id


def events_sent(store: Store, request_id: str) -> list[tuple[str, str | None]]:
    return [(row.event, row.target) for row in store.outbox_for(request_id) if row.message == "event"]


def test_each_webhook_change_is_seen_by_the_next_write(store: Store) -> None:
    quiet = cycle(store, "before")
    assert store.outbox_for(quiet) == []
    webhook, _ = store.add_webhook(URL, events=["request.decided"], allow_private=True, actor="test")
    assert events_sent(store, cycle(store, "decided-only")) == [("request.decided", webhook.id)]
    store.update_webhook(webhook.id, events=["request.created", "request.decided"], actor="test")
    both = events_sent(store, cycle(store, "both"))
    assert both == [("request.created", webhook.id), ("request.decided", webhook.id)]
    store.set_webhook_disabled(webhook.id, True, actor="test")
    assert events_sent(store, cycle(store, "disabled")) == []
    store.set_webhook_disabled(webhook.id, False, actor="test")
    assert len(events_sent(store, cycle(store, "enabled"))) == 2
    store.remove_webhook(webhook.id, actor="test")
    assert events_sent(store, cycle(store, "removed")) == []


def test_a_decision_updates_its_notices_with_no_webhook(store: Store) -> None:
    request_id = cycle(store, "noticed", approvers=("alice",), channels=("chat",))
    rows = [(row.message, row.channel, row.event) for row in store.outbox_for(request_id)]
    assert rows == [("notice", "chat", "request.created"), ("update", "chat", "request.decided")]


def test_a_webhook_added_through_another_connection_gets_the_next_events(sqlite_store: SQLiteStore) -> None:
    assert sqlite_store.outbox_for(cycle(sqlite_store, "remembered")) == []  # "nobody subscribes" is known
    other = SQLiteStore(sqlite_store.path)
    try:
        webhook, _ = other.add_webhook(URL, allow_private=True, actor="test")
    finally:
        other.close()
    sent = events_sent(sqlite_store, cycle(sqlite_store, "after"))
    assert sent == [("request.created", webhook.id), ("request.decided", webhook.id)]


def test_a_webhook_added_by_another_process_gets_the_next_events(sqlite_store: SQLiteStore) -> None:
    assert sqlite_store.outbox_for(cycle(sqlite_store, "remembered")) == []
    script = textwrap.dedent(
        f"""
        from signoff.store import SQLiteStore
        store = SQLiteStore({sqlite_store.path!r})
        webhook, _ = store.add_webhook({URL!r}, events=["request.decided"], allow_private=True, actor="test")
        print(webhook.id)
        store.close()
        """
    )
    added = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    webhook_id = added.stdout.strip()
    assert events_sent(sqlite_store, cycle(sqlite_store, "after")) == [("request.decided", webhook_id)]


def test_a_grouped_write_sees_a_webhook_added_earlier_in_its_group(sqlite_store: SQLiteStore) -> None:
    assert sqlite_store.outbox_for(cycle(sqlite_store, "remembered")) == []
    with sqlite_store.grouped():
        webhook, _ = sqlite_store.add_webhook(URL, events=["request.created"], allow_private=True, actor="t")
        request_id = ask(sqlite_store, "grouped")
    assert events_sent(sqlite_store, request_id) == [("request.created", webhook.id)]
