"""What the channel administration tests share: a key, a text bridge channel's settings pointed at
a local receiver, a second server on the same database, a request routed to a channel."""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import timedelta
from typing import Any

from signoff._util import utcnow
from signoff.channels.sealing import SecretsKey
from signoff.outbox import OutboxSettings, RetryPolicy
from signoff.requests import NewRequest
from signoff.rules.effective import RequestRule
from signoff.server import ServerSettings
from signoff.store import Store, open_store

from .conftest import url_for
from .live import LiveServer

BRIDGE_SECRET = "whsec_" + base64.b64encode(b"the admin-added bridge's secret!").decode()
OTHER_SECRET = "whsec_" + base64.b64encode(b"the bridge's second secret, new!").decode()
KEY = SecretsKey(b"k" * 32)
SETTINGS = ServerSettings(
    sweep_interval=0.1,
    secrets_key=KEY,
    outbox=OutboxSettings(poll=0.05, retry=RetryPolicy.quick()),
)


def bridge(url: str, *, name: str = "wechat", secret: str = BRIDGE_SECRET) -> dict[str, Any]:
    """The API body that adds a text bridge channel sending to `url`."""
    return {
        "name": name,
        "kind": "text",
        "settings": {"platform": "wechat", "send_url": url},
        "secrets": {"secret": secret},
    }


def ask(store: Store, call: str, *, channel: str = "wechat", approver: str = "alice") -> str:
    """A pending request whose rule sends it to `approver` on `channel`."""
    new = NewRequest(
        thread_id="admin-thread",
        tool_call_id=call,
        tool_name="send_email",
        args={"to": "bob@example.com"},
        description="Send a mail to bob",
        deadline=utcnow() + timedelta(hours=1),
        rule=RequestRule(approvers=(approver,), channels=("inbox", channel)),
    )
    return store.create_request(new)[0].id


def wait_until(check: Callable[[], object], timeout: float = 15.0) -> None:
    give_up = time.monotonic() + timeout
    while time.monotonic() < give_up:
        if check():
            return
        time.sleep(0.02)
    raise AssertionError("timed out waiting")


@contextmanager
def another_server(store: Store, settings: ServerSettings = SETTINGS) -> Iterator[LiveServer]:
    """A second replica: its own store object on the same database, its own process state."""
    other = open_store(url_for(store))
    try:
        with LiveServer(other, replace(settings)) as server:
            yield server
    finally:
        other.close()


def audit_of(store: Store, action: str) -> list[dict[str, Any]]:
    return [entry.data for entry in store.audit_entries(action=action)]
