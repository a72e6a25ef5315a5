"""A channel that answers its callbacks whole (as Slack's modals do) gets the server's
`CallbackHost`, never the server: through it a click first opens a form (only for a person who
may decide the request now, the refusal audited), and the form's decision goes through the shared
path (`act`: the sender's verified address, the approver check, the first decision wins)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import httpx
import pytest

from signoff.channels import ChannelRegistry
from signoff.channels.contract import CallbackHost, Inbound, InboundOutcome
from signoff.channels.recording import RecordingChannel
from signoff.channels.registry import ChannelConfig
from signoff.server.channel_callbacks import ServerCallbacks
from signoff.store import Store

from .live import LiveServer
from .test_outbox import QUICK, ask


class FormChannel(RecordingChannel):
    """`{"sender", "open": request_id}` asks for the request's form; anything else is the
    recording channel's callback, decided through the host."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.hosts: list[CallbackHost] = []

    def verify(self, body: bytes, headers: Mapping[str, str]) -> Inbound:
        data = json.loads(body)
        if "open" in data:
            return Inbound(kind="reply", sender=data["sender"], request_id=data["open"], extra={"open": True})
        return super().verify(body, headers)

    async def handle(self, host: CallbackHost, inbound: Inbound) -> tuple[int, Any] | None:
        self.hosts.append(host)
        if inbound.extra.get("open"):
            checked = await host.request_to_decide(self, inbound)
            if isinstance(checked, InboundOutcome):
                return 200, {"refused": checked.result, "message": checked.message}
            request = await host.request(checked.id)
            return 200, {"form": request.tool_name, "args": request.shown_args()}
        outcome = await host.decide(self, inbound)
        return 200, {"decided": outcome.result, "message": outcome.message}


@pytest.fixture
def served(sqlite_store: Store) -> Iterator[tuple[LiveServer, FormChannel]]:
    for name, address in (("alice", "U-ALICE"), ("mallory", "U-MALLORY")):
        sqlite_store.add_user(name, role="member", actor="test")
        sqlite_store.set_address(name, "recording", address, actor="test")
    channel = FormChannel("forms")
    registry = ChannelRegistry()
    registry.add(channel, ChannelConfig(name="forms", kind="recording"))
    with LiveServer(sqlite_store, QUICK, channels=registry) as live:
        yield live, channel


def post(live: LiveServer, body: dict[str, Any]) -> Any:
    answer = httpx.post(f"{live.url}/channels/forms/callback", content=json.dumps(body).encode(), timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_an_approver_opens_the_form_then_decides_through_the_host(
    served: tuple[LiveServer, FormChannel], sqlite_store: Store
) -> None:
    live, channel = served
    request_id = ask(sqlite_store, approvers=("alice",))
    opened = post(live, {"sender": "U-ALICE", "open": request_id})
    assert opened == {"form": "send_email", "args": {"to": "bob@example.com", "token": "***"}}
    decided = post(live, {"sender": "U-ALICE", "request_id": request_id, "decision": {"type": "approve"}})
    assert decided == {"decided": "decided", "message": "Approved."}
    assert sqlite_store.get_request(request_id).status == "approved"
    assert all(isinstance(host, ServerCallbacks) for host in channel.hosts)
    again = post(live, {"sender": "U-ALICE", "open": request_id})
    assert again == {"refused": "refused", "message": "Already approved by alice."}


def test_no_form_opens_for_anyone_else_and_the_refusal_is_audited(
    served: tuple[LiveServer, FormChannel], sqlite_store: Store
) -> None:
    live, _ = served
    request_id = ask(sqlite_store, approvers=("alice",))
    refused = post(live, {"sender": "U-MALLORY", "open": request_id})
    assert refused == {"refused": "refused", "message": "You are not an approver of this request."}
    stranger = post(live, {"sender": "U-NOBODY", "open": request_id})
    assert stranger["refused"] == "unknown_sender"
    decided = post(live, {"sender": "U-MALLORY", "request_id": request_id, "decision": {"type": "approve"}})
    assert decided["decided"] == "refused"
    assert sqlite_store.get_request(request_id).status == "pending"
    actions = [entry.action for entry in sqlite_store.audit_entries(request_id=request_id)]
    assert "request.view_refused" in actions and "callback.refused" in actions
