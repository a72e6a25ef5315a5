"""`kill -9` of a real `signoff serve` after a decision and before its notification was
delivered: started again, the server sends it, and the receiver gets it once (by webhook-id)."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from signoff import Approve
from signoff._util import utcnow
from signoff.requests import NewRequest
from signoff.store import SQLiteStore

from ..receivers import Receiver
from .test_server_killed import Server, eventually

pytestmark = pytest.mark.slow


class OutboxServer(Server):
    """`signoff serve` with quick retries and a short claim lease."""

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "signoff.cli",
                    "serve",
                    "--db",
                    f"sqlite:///{self.db}",
                    "--port",
                    str(self.port),
                    "--outbox-retry-first",
                    "0.05",
                    "--outbox-retry-cap",
                    "0.1",
                    "--outbox-lease",
                    "1",
                    "--allow-private-webhooks",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        self._wait()

    def _wait(self) -> None:
        import time

        import httpx

        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            assert self.process is not None and self.process.poll() is None, self.log.read_text()[-2000:]
            assert time.monotonic() < deadline, "signoff serve did not start"
            time.sleep(0.05)


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
        server = OutboxServer(db, tmp_path / "serve.log")
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
