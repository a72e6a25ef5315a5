"""A real signoff server with a Slack channel whose Web API is a `FakeSlack`, for the Slack
tests: people with Slack addresses, requests routed to Slack, and signed interactions posted
to the server's callback URL as Slack would."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx

from signoff._util import utcnow
from signoff.channels import ChannelRegistry
from signoff.channels.slack import SlackChannel
from signoff.outbox import OutboxSettings, RetryPolicy
from signoff.requests import NewRequest
from signoff.rules.effective import RequestRule
from signoff.server import ServerSettings
from signoff.store import Store

from ..live import LiveServer
from .slack_fake import TOKEN, FakeSlack
from .slack_signing import SIGNING_SECRET, form, signed

QUICK = ServerSettings(sweep_interval=0.1, outbox=OutboxSettings(poll=0.05, retry=RetryPolicy.quick()))
PEOPLE = {"alice": "U-ALICE", "carol": "U-CAROL", "bob": "U-BOB"}
"""Who has which Slack user id; bob is never an approver."""


@dataclass
class SlackSetup:
    server: LiveServer
    fake: FakeSlack
    channel: SlackChannel

    @property
    def store(self) -> Store:
        return self.server.store

    def post(self, payload: dict[str, Any] | bytes, **signing: Any) -> httpx.Response:
        """POST an interaction to the callback URL, signed (`secret=`, `at=` to sign it wrong)."""
        body = payload if isinstance(payload, bytes) else form(payload)
        headers = signed(body, **signing)
        return httpx.post(
            f"{self.server.url}/channels/slack/callback", content=body, headers=headers, timeout=30
        )

    def ask(self, call: str = "c1", *, hours: float = 1, **rule: Any) -> str:
        rule.setdefault("approvers", ("alice",))
        rule.setdefault("channels", ("slack",))
        new = NewRequest(
            thread_id="thread-s",
            tool_call_id=call,
            tool_name="send_email",
            args={
                "to": "bob@example.com",
                "subject": "Hi",
                "retries": 2,
                "urgent": False,
                "password": "hunter2",
            },
            description="Send a mail to bob",
            deadline=utcnow() + timedelta(hours=hours),
            requester="carol",
            args_schema=SCHEMA,
            rule=RequestRule(redact=("password",), **rule),
        )
        return self.store.create_request(new)[0].id

    def sent_to(self, user_id: str, count: int = 1) -> list[dict[str, Any]]:
        """The chat.postMessage bodies sent to `user_id` (waiting for `count` of them)."""
        wait_until(lambda: len(self._posts(user_id)) >= count)
        return self._posts(user_id)

    def _posts(self, user_id: str) -> list[dict[str, Any]]:
        return [call.body for call in self.fake.of("chat.postMessage") if call.body.get("channel") == user_id]


SCHEMA = {
    "type": "object",
    "properties": {
        "to": {"type": "string", "pattern": "^[^@]+@[^@]+$"},
        "subject": {"type": "string", "maxLength": 40},
        "retries": {"type": "integer", "minimum": 0},
        "urgent": {"type": "boolean"},
        "password": {"type": "string"},
    },
    "required": ["to", "subject"],
    "additionalProperties": False,
}


def wait_until(check: Callable[[], object], timeout: float = 15.0) -> None:
    give_up = time.monotonic() + timeout
    while time.monotonic() < give_up:
        if check():
            return
        time.sleep(0.02)
    raise AssertionError("timed out waiting")


@contextmanager
def slack_server(store: Store, settings: ServerSettings = QUICK) -> Iterator[SlackSetup]:
    """A live server with a Slack channel, its callbacks going to the server's own route."""
    for name, user_id in PEOPLE.items():
        store.add_user(name, role="member", actor="test")
        store.set_address(name, "slack", user_id, actor="test")
    with FakeSlack() as fake:
        channel = SlackChannel(
            "slack", bot_token=TOKEN, signing_secret=SIGNING_SECRET, api_url=fake.api_url, timeout=5
        )
        registry = ChannelRegistry()
        registry.add(channel)
        live = LiveServer(store, settings, channels=registry)
        with live:
            yield SlackSetup(live, fake, channel)
