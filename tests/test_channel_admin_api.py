"""The channel and webhook administration API (issue 18): admins only; every operation answers as
`/openapi.json` documents it, bad input is a 4xx naming what is wrong and changes nothing, and
every change is one audit entry with before and after, secrets never in it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from standardwebhooks import Webhook as Verifier

from signoff.channels import ChannelRegistry, parse_config
from signoff.store import Store

from .channel_admin_support import BRIDGE_SECRET, OTHER_SECRET, SETTINGS, ask, bridge, wait_until
from .live import LiveServer
from .receivers import Receiver
from .test_inbox import Person

ADMIN_ACTIONS = (
    "channel.added",
    "channel.changed",
    "channel.disabled",
    "channel.enabled",
    "channel.tested",
    "webhook.added",
    "webhook.changed",
    "webhook.disabled",
    "webhook.enabled",
    "webhook.tested",
    "webhook.rotated",
    "webhook.removed",
    "delivery.retried",
)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as receiving:
        yield receiving


@pytest.fixture
def server(store: Store) -> Iterator[LiveServer]:
    store.add_user("alice", role="member", actor="test")
    store.set_address("alice", "text:wechat", "wxid_alice", actor="test")
    with LiveServer(store, SETTINGS) as live:
        yield live


@pytest.fixture
def admin(server: LiveServer) -> Iterator[httpx.Client]:
    with server.client(server.user("root", "admin")) as client:
        yield client


def entries(store: Store) -> list[tuple[str, dict[str, Any]]]:
    return [(entry.action, entry.data) for entry in store.audit_entries() if entry.action in ADMIN_ACTIONS]


def test_each_channel_operation_is_one_audit_entry_with_before_and_after(
    server: LiveServer, admin: httpx.Client, receiver: Receiver
) -> None:
    store = server.store
    added = admin.post("/v1/channels", json=bridge(receiver.url))
    assert added.status_code == 201, added.text
    assert added.json()["secrets"] == {"secret": "set"} and added.json()["source"] == "store"
    edit = {"version": 1, "timeout": 5, "secrets": {"secret": OTHER_SECRET}}
    assert admin.patch("/v1/channels/wechat", json=edit).json()["timeout"] == 5
    assert admin.post("/v1/channels/wechat/disable").json()["disabled"] is True
    assert admin.post("/v1/channels/wechat/enable").json()["disabled"] is False
    trial = admin.post("/v1/channels/wechat/test", json={"to": "alice"}).json()
    assert trial["ok"] is True and trial["target"] == "wxid_alice" and trial["kind"] == "text"
    (post,) = receiver.wait_for(1)
    assert Verifier(OTHER_SECRET).verify(post.body, post.headers)["to"] == "wxid_alice"

    logged = entries(store)
    assert [action for action, _ in logged] == [
        "channel.added",
        "channel.changed",
        "channel.disabled",
        "channel.enabled",
        "channel.tested",
    ]
    (_, added_entry), (_, changed), (_, disabled), (_, enabled), (_, tested) = logged
    assert added_entry["before"] is None and added_entry["after"]["secrets"] == {"secret": "set"}
    assert changed["before"]["timeout"] == 10.0 and changed["after"]["timeout"] == 5.0
    assert changed["replaced_secrets"] == ["secret"]
    assert (disabled["before"]["disabled"], disabled["after"]["disabled"]) == (False, True)
    assert (enabled["before"]["disabled"], enabled["after"]["disabled"]) == (True, False)
    assert tested["ok"] is True and tested["to"] == "alice"
    everything = json.dumps([entry.data for entry in store.audit_entries()])
    assert BRIDGE_SECRET not in everything and OTHER_SECRET not in everything


def test_each_webhook_operation_is_one_audit_entry_and_its_secret_is_shown_once(
    server: LiveServer, admin: httpx.Client, receiver: Receiver
) -> None:
    store = server.store
    added = admin.post("/v1/webhooks", json={"url": receiver.url, "events": ["request.created"]})
    assert added.status_code == 201
    hook, secret = added.json()["id"], added.json()["secret"]
    changed = admin.patch(f"/v1/webhooks/{hook}", json={"events": ["request.decided"], "description": "ops"})
    assert changed.json()["events"] == ["request.decided"] and changed.json()["description"] == "ops"
    trial = admin.post(f"/v1/webhooks/{hook}/test").json()
    assert trial["ok"] is True and trial["kind"] == "webhook"
    (post,) = receiver.wait_for(1)
    event = Verifier(secret).verify(post.body, post.headers)
    assert event["type"] == "webhook.test" and event["data"]["webhook"] == hook
    assert admin.post(f"/v1/webhooks/{hook}/disable").json()["disabled"] is True
    refused = admin.post(f"/v1/webhooks/{hook}/test")
    assert refused.status_code == 409 and "disabled" in refused.json()["error"]["message"]
    assert admin.post(f"/v1/webhooks/{hook}/enable").json()["disabled"] is False
    rotated = admin.post(f"/v1/webhooks/{hook}/rotate", json={"keep_old": False}).json()["secret"]
    assert admin.delete(f"/v1/webhooks/{hook}").status_code == 200

    logged = entries(store)
    assert [action for action, _ in logged] == [
        "webhook.added",
        "webhook.changed",
        "webhook.tested",
        "webhook.disabled",
        "webhook.enabled",
        "webhook.rotated",
        "webhook.removed",
    ]
    for action, data in logged:
        assert ("before" in data and "after" in data) or action == "webhook.tested", action
    assert logged[1][1]["before"]["events"] == ["request.created"]
    assert logged[1][1]["after"]["events"] == ["request.decided"]
    assert logged[-1][1]["after"] is None and logged[-1][1]["before"]["secrets"] == 1
    everything = json.dumps([entry.data for entry in store.audit_entries()])
    assert secret not in everything and rotated not in everything
    assert secret not in admin.get("/v1/webhooks").text


def test_a_disabled_webhooks_waiting_events_are_dead_letters_to_send_again(
    server: LiveServer, admin: httpx.Client, receiver: Receiver
) -> None:
    receiver.fail = 1000  # the receiver is down: the event waits for its retry
    hook = admin.post("/v1/webhooks", json={"url": receiver.url, "events": ["request.created"]}).json()["id"]
    request_id = ask(server.store, "c1", channel="inbox")

    def lane() -> dict[str, Any]:
        found: dict[str, Any] = admin.get(f"/v1/webhooks/{hook}/deliveries").json()
        return found

    wait_until(lambda: lane()["recent"] and lane()["recent"][0]["attempts"] >= 1)
    assert admin.post(f"/v1/webhooks/{hook}/disable").status_code == 200
    wait_until(lambda: lane()["dead"])
    [dead] = lane()["dead"]
    assert dead["request_id"] == request_id and "disabled" in dead["last_error"]
    assert admin.post(f"/v1/outbox/{dead['id']}/retry").status_code == 409
    admin.post(f"/v1/webhooks/{hook}/enable")
    receiver.fail = 0
    retried = admin.post(f"/v1/outbox/{dead['id']}/retry")
    assert retried.status_code == 200 and retried.json()["state"] == "pending"
    receiver.wait_for(1)
    [entry] = [data for action, data in entries(server.store) if action == "delivery.retried"]
    assert entry["before"]["state"] == "dead" and entry["after"] == {"state": "pending"}


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "says"),
    [
        ("post", "/v1/channels", {"name": "x", "kind": "pigeon"}, 422, "unknown channel kind"),
        (
            "post",
            "/v1/channels",
            {"name": "x", "kind": "text", "settings": {"nope": 1}},
            422,
            "no setting 'nope'",
        ),
        ("post", "/v1/channels", {"name": "x", "kind": "recording", "timeout": -1}, 422, "timeout"),
        ("post", "/v1/channels", {"name": "x", "kind": "recording", "extra": 1}, 422, "extra"),
        ("get", "/v1/channels/nope", None, 404, "no channel named 'nope'"),
        ("patch", "/v1/channels/nope", {"timeout": 3}, 404, "no channel named 'nope'"),
        ("post", "/v1/channels/nope/disable", None, 404, "no channel named 'nope'"),
        ("post", "/v1/channels/nope/test", {"target": "x"}, 404, "no channel named 'nope'"),
        ("get", "/v1/channels/nope/deliveries", None, 404, "no channel named 'nope'"),
        ("patch", "/v1/webhooks/whk_nope", {"description": "x"}, 404, "no webhook"),
        ("patch", "/v1/webhooks/whk_nope", {"url": "ftp://x"}, 422, "must be http(s)"),
        ("post", "/v1/webhooks/whk_nope/test", None, 404, "no webhook"),
        ("get", "/v1/webhooks/whk_nope/deliveries", None, 404, "no webhook"),
    ],
)
def test_bad_input_is_a_clear_error_and_changes_nothing(
    server: LiveServer, admin: httpx.Client, method: str, path: str, body: Any, status: int, says: str
) -> None:
    version = server.store.channels_version()
    answer = admin.request(method.upper(), path, json=body)
    assert answer.status_code == status, answer.text
    assert says in answer.text
    assert server.store.channels_version() == version and entries(server.store) == []


def test_an_edit_from_an_old_version_is_refused(admin: httpx.Client) -> None:
    assert admin.post("/v1/channels", json={"name": "rec", "kind": "recording"}).status_code == 201
    assert admin.patch("/v1/channels/rec", json={"version": 1, "timeout": 3}).status_code == 200
    stale = admin.patch("/v1/channels/rec", json={"version": 1, "timeout": 4})
    assert stale.status_code == 409 and "changed meanwhile" in stale.json()["error"]["message"]
    assert admin.get("/v1/channels/rec").json()["timeout"] == 3.0


def test_a_channel_from_the_file_is_listed_read_only(sqlite_store: Store) -> None:
    registry = ChannelRegistry.from_configs(
        parse_config({"chat": {"kind": "recording", "secret": "s3cret-from-the-file"}})
    )
    with (
        LiveServer(sqlite_store, SETTINGS, channels=registry) as server,
        server.client(server.user("root", "admin")) as admin,
    ):
        [shown] = admin.get("/v1/channels").json()
        assert shown["source"] == "file" and shown["secrets"] == {"secret": "set"}
        assert "s3cret" not in admin.get("/v1/channels").text
        for method, path in (("PATCH", "/v1/channels/chat"), ("POST", "/v1/channels/chat/disable")):
            refused = admin.request(method, path, json={} if method == "PATCH" else None)
            assert refused.status_code == 409 and "channels file" in refused.json()["error"]["message"]
        taken = admin.post("/v1/channels", json={"name": "chat", "kind": "recording"})
        assert taken.status_code == 409


def test_only_admins_administer_channels_and_the_refusal_is_audited(server: LiveServer) -> None:
    with server.client(server.user("mallory")) as member:
        for method, path in (("GET", "/v1/channels"), ("POST", "/v1/channels/x/disable")):
            refused = member.request(method, path)
            assert refused.status_code == 403 and "not an admin" in refused.text
    refusals = [
        entry for entry in server.store.audit_entries(action="access.refused") if entry.actor == "mallory"
    ]
    assert len(refusals) == 2


def test_the_pages_refuse_bad_input_without_filling_a_secret_back_in(server: LiveServer) -> None:
    root = Person(server, "webroot", "admin")
    try:
        form = {
            "csrf_token": root.csrf,
            "kind": "text",
            "name": "wechat",
            "setting.platform": "We Chat!",
            "setting.send_url": "https://bridge.example.com/send",
            "secret.secret": BRIDGE_SECRET,
        }
        refused = root.client.post("/admin/channels", data=form)
        assert refused.status_code == 422
        assert "platform is a short lower-case name" in refused.text
        assert 'value="https://bridge.example.com/send"' in refused.text and BRIDGE_SECRET not in refused.text
        assert server.store.stored_channels() == []
        missing = root.client.post("/admin/channels/webhooks/whk_nope/retry", data={"csrf_token": root.csrf})
        assert missing.status_code == 404 and "no webhook" in missing.text
        no_csrf = root.client.post("/admin/channels", data={**form, "csrf_token": "forged"})
        assert no_csrf.status_code == 403 and server.store.stored_channels() == []
    finally:
        root.close()
    with server.client(server.user("mallory")) as member:
        assert member.get("/admin/channels").status_code == 403
