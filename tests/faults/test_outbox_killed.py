"""`kill -9` of a real `signoff serve` after a decision and before its notification was
delivered: started again, the server sends it, and the receiver gets it once (by webhook-id)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from signoff import Approve
from signoff._util import utcnow
from signoff.requests import NewRequest
from signoff.store import SQLiteStore

from ..receivers import Receiver
from ..served import ServeProcess, eventually

pytestmark = pytest.mark.slow


QUICK_OUTBOX = ["--outbox-retry-first", "0.05", "--outbox-retry-cap", "0.1", "--outbox-lease", "1"]
"""`signoff serve` with quick retries and a short claim lease."""


def test_a_notification_pending_at_a_kill_9_is_sent_once_after_the_restart(tmp_path: Path) -> None:
    db = tmp_path / "signoff.db"
    store = SQLiteStore(db)
    store.add_user("alice", role="member", actor="test")
    with Receiver(fail=10**6) as receiver:
        store.add_webhook(receiver.url, events=["request.decided"], allow_private=True, actor="test")
        request, _ = store.create_request(
            NewRequest(
                thread_id="t",
                tool_call_id="c",
                tool_name="deploy",
                args={},
                description="Deploy",
                deadline=utcnow() + timedelta(hours=1),
            )
        )
        server = ServeProcess(
            f"sqlite:///{db}", tmp_path / "serve.log", args=[*QUICK_OUTBOX, "--allow-private-webhooks"]
        )
        server.start()
        try:
            store.decide(request.id, Approve(), actor="alice")
            eventually(lambda: len(receiver.posts) >= 2)  # the server is trying, the receiver refusing
            server.kill()
            assert receiver.delivered == []
            receiver.fail = 0
            tried = len(receiver.posts)
            server.start()
            [delivered] = receiver.wait_for(1, timeout=30)
            eventually(lambda: store.outbox_for(request.id)[0].state == "sent")
        finally:
            server.stop()
        assert len(receiver.delivered) == 1
        assert len(receiver.posts) == tried + 1
        assert {post.headers["webhook-id"] for post in receiver.posts} == {delivered.headers["webhook-id"]}
    results = [attempt.outcome for attempt in store.delivery_attempts(request.id)]
    assert results[-1] == "sent" and results.count("sent") == 1
    store.close()
