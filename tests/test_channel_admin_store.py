"""Channels kept in the store (issue 18): their secrets sealed under the servers' key (a copy of the
database reveals none; another key, or none, opens none and the channel is not used); every
replica follows an add, an edit and a disable without a restart; a disabled channel sends nothing
(what waits for it is dead-lettered, and what is written later too) and its callbacks are
refused; bad input is refused with the field named and changes nothing. SQLite and PostgreSQL."""

from __future__ import annotations

import sqlite3
from typing import Any

import httpx
import pytest
from standardwebhooks import Webhook as Verifier

from signoff.channel_admin import ChannelChange, ChannelPlace, add_channel
from signoff.channels.recording import RecordingChannel
from signoff.channels.registry import ChannelRegistry
from signoff.channels.sealing import SecretsKey
from signoff.destinations import Destinations
from signoff.errors import SignoffError
from signoff.store import SQLiteStore, Store

from .channel_admin_support import (
    BRIDGE_SECRET,
    KEY,
    OTHER_SECRET,
    SETTINGS,
    another_server,
    ask,
    audit_of,
    bridge,
    wait_until,
)
from .live import LiveServer
from .receivers import Receiver


@pytest.fixture
def people(store: Store) -> Store:
    store.add_user("alice", role="member", actor="test")
    store.set_address("alice", "text:wechat", "wxid_alice", actor="test")
    return store


def local_place(
    store: Store, key: SecretsKey | None = KEY, *, registry: ChannelRegistry | None = None
) -> ChannelPlace:
    local = Destinations(allow_private=True)
    chosen = registry if registry is not None else ChannelRegistry()
    return ChannelPlace.local(store, chosen, key=key, destinations=local)


def add_bridge(store: Store, url: str, key: SecretsKey | None = KEY) -> None:
    body = bridge(url)
    given = ChannelChange(kind="text", settings=body["settings"], secrets=body["secrets"])
    add_channel(local_place(store, key), "wechat", given, actor="root", via="test")


def test_secrets_are_sealed_at_rest_and_opened_only_with_the_key(sqlite_store: SQLiteStore) -> None:
    add_bridge(sqlite_store, "http://127.0.0.1:9/hook")
    stored = sqlite_store.stored_channel("wechat")
    assert stored is not None
    assert stored.to_dict()["secrets"] == {"secret": "set"}
    assert BRIDGE_SECRET not in repr(stored) and BRIDGE_SECRET not in str(stored.to_dict())
    sealed = stored.secrets["secret"]
    assert sealed.startswith(f"v1:{KEY.id}:") and BRIDGE_SECRET not in sealed
    sqlite_store.close()
    raw = sqlite3.connect(sqlite_store.path).execute("SELECT settings, secrets FROM channels").fetchall()
    assert raw and BRIDGE_SECRET not in str(raw)  # a copy of the database reveals nothing
    assert stored.config(KEY).secret("secret") == BRIDGE_SECRET
    for key, says in ((SecretsKey.generate(), "another secrets key"), (None, "no key")):
        registry = ChannelRegistry()
        local_place(SQLiteStore(sqlite_store.path), key, registry=registry).follow()
        assert registry.get("wechat") is None, "a channel whose secrets do not open is not used"
        assert says in registry.why_not("wechat")


def test_a_sealed_value_does_not_open_for_another_channel_or_setting() -> None:
    sealed = KEY.seal("slack", "bot_token", "xoxb-1")
    assert KEY.open("slack", "bot_token", sealed) == "xoxb-1"
    for channel, setting in (("other", "bot_token"), ("slack", "signing_secret")):
        with pytest.raises(SignoffError, match="does not open"):
            KEY.open(channel, setting, sealed)
    assert "xoxb" not in repr(KEY) and KEY.text not in repr(KEY)
    assert SecretsKey.from_text(KEY.text).id == KEY.id


@pytest.mark.parametrize(
    ("name", "change", "says"),
    [
        ("wechat", ChannelChange(kind="pigeon"), "unknown channel kind 'pigeon'"),
        ("Bad Name", ChannelChange(kind="recording"), "channel name"),
        ("inbox", ChannelChange(kind="recording"), "the web inbox's own"),
        ("wechat", ChannelChange(kind="text", settings={"platfrom": "x"}), "has no setting 'platfrom'"),
        ("wechat", ChannelChange(kind="text", settings={"secret": "whsec_x"}), "secret is a secret"),
        ("wechat", ChannelChange(kind="text", settings={"platform": "wechat"}), "needs send_url, secret"),
        ("mail", ChannelChange(kind="email", settings={"from": "x@y.z", "port": "many"}), "port must be"),
        ("mail", ChannelChange(kind="email", locale="fr", settings={"from": "x@y.z"}), "locale must be"),
        ("mail", ChannelChange(kind="email", timeout=0, settings={"from": "x@y.z"}), "timeout must be > 0"),
        ("mail", ChannelChange(kind="email", settings={"from": "not-a-mail"}), "must be a mail address"),
        (
            "wechat",
            ChannelChange(
                kind="text",
                settings={"platform": "wechat", "send_url": "http://169.254.169.254/"},
                secrets={"secret": BRIDGE_SECRET},
            ),
            "send_url goes to a cloud metadata address",
        ),
        (
            "wechat",
            ChannelChange(
                kind="text",
                settings={"platform": "wechat", "send_url": "https://bridge.example.com/"},
                secrets={"secret": "not-a-whsec"},
            ),
            "Standard Webhooks secret",
        ),
    ],
)
def test_bad_input_is_refused_saying_why_and_changes_nothing(
    sqlite_store: SQLiteStore, name: str, change: ChannelChange, says: str
) -> None:
    place = ChannelPlace.local(sqlite_store, ChannelRegistry(), key=KEY, destinations=Destinations())
    before = sqlite_store.channels_version()
    with pytest.raises(SignoffError, match=says) as refused:
        add_channel(place, name, change, actor="root", via="test")
    assert refused.value.status_code == 422
    assert sqlite_store.stored_channels() == [] and sqlite_store.channels_version() == before
    assert audit_of(sqlite_store, "channel.added") == []


def test_a_channel_with_secrets_needs_the_key_and_a_file_channels_name_is_taken(
    sqlite_store: SQLiteStore,
) -> None:
    with pytest.raises(SignoffError, match="no key to keep channel secrets") as refused:
        add_bridge(sqlite_store, "http://127.0.0.1:9/hook", key=None)
    assert refused.value.status_code == 422 and sqlite_store.stored_channels() == []
    registry = ChannelRegistry()
    registry.add(RecordingChannel("wechat"))
    body = bridge("http://127.0.0.1:9/hook")
    given = ChannelChange(kind="text", settings=body["settings"], secrets=body["secrets"])
    with pytest.raises(SignoffError, match="channels file names a channel 'wechat'") as taken:
        add_channel(local_place(sqlite_store, registry=registry), "wechat", given, actor="root", via="test")
    assert taken.value.status_code == 409 and sqlite_store.stored_channels() == []


def test_every_replica_follows_an_add_an_edit_and_a_disable(people: Store) -> None:
    with (
        Receiver() as first,
        Receiver() as second,
        LiveServer(people, SETTINGS) as one,
        another_server(people) as two,
        one.client(one.user("root", "admin")) as admin,
    ):
        assert admin.post("/v1/channels", json=bridge(first.url)).status_code == 201
        ask(two.store, "c1")  # a request made on the other replica: its worker sends it
        (post,) = first.wait_for(1)
        assert Verifier(BRIDGE_SECRET).verify(post.body, post.headers)["to"] == "wxid_alice"

        edit = {"settings": {"send_url": second.url}, "secrets": {"secret": OTHER_SECRET}}
        assert admin.patch("/v1/channels/wechat", json=edit).status_code == 200
        with two.client(two.user("root2", "admin")) as other:
            shown = other.get("/v1/channels/wechat").json()
        assert shown["version"] == 2 and shown["settings"]["send_url"] == second.url
        ask(one.store, "c2")
        (moved,) = second.wait_for(1)
        assert Verifier(OTHER_SECRET).verify(moved.body, moved.headers)["to"] == "wxid_alice"

        assert admin.post("/v1/channels/wechat/disable").status_code == 200
        with httpx.Client(base_url=two.url) as platform:  # the other replica refuses at once
            refused = platform.post("/channels/wechat/callback", content=b"{}")
        assert refused.status_code == 403 and "disabled" in refused.json()["error"]["message"]
        assert [data["reason"] for data in audit_of(people, "callback.refused")] == [
            "the channel wechat is disabled"
        ]


def test_a_disabled_channel_sends_nothing_until_it_is_enabled_and_its_dead_letters_retried(
    people: Store,
) -> None:
    with (
        Receiver() as bridge_receiver,
        LiveServer(people, SETTINGS) as server,
        server.client(server.user("root", "admin")) as admin,
    ):
        assert admin.post("/v1/channels", json=bridge(bridge_receiver.url)).status_code == 201
        assert admin.post("/v1/channels/wechat/disable").json()["state"] == "disabled"
        request_id = ask(people, "c1")

        def dead() -> list[dict[str, Any]]:
            return admin.get("/v1/channels/wechat/deliveries").json()["dead"]

        wait_until(lambda: len(dead()) == 1)
        [row] = dead()
        assert row["request_id"] == request_id and row["last_error"] == "the channel wechat is disabled"
        assert bridge_receiver.posts == []
        retried = admin.post(f"/v1/outbox/{row['id']}/retry")
        assert retried.status_code == 409 and "enable it first" in retried.json()["error"]["message"]

        assert admin.post("/v1/channels/wechat/enable").json()["state"] == "ready"
        assert admin.post(f"/v1/outbox/{row['id']}/retry").status_code == 200
        (post,) = bridge_receiver.wait_for(1)
        assert Verifier(BRIDGE_SECRET).verify(post.body, post.headers)["to"] == "wxid_alice"
        wait_until(lambda: admin.get("/v1/channels/wechat/deliveries").json()["recent"][0]["state"] == "sent")


def test_disabling_dead_letters_what_waits_in_the_same_change(people: Store) -> None:
    place = local_place(people)
    body = bridge("http://127.0.0.1:9/hook")
    given = ChannelChange(kind="text", settings=body["settings"], secrets=body["secrets"])
    add_channel(place, "wechat", given, actor="root", via="test")
    waiting = [ask(people, f"c{index}") for index in range(3)]
    people.set_channel_disabled("wechat", True, actor="root", channel="test")
    rows = people.lane_outbox("channel:wechat")
    assert sorted(row.request_id for row in rows if row.message == "notice") == sorted(waiting)
    assert {row.state for row in rows} == {"dead"}
    assert {row.last_error for row in rows} == {"the channel wechat was disabled by root"}
    [entry] = audit_of(people, "channel.disabled")
    assert entry["dead_lettered"] == 3
    assert entry["before"]["disabled"] is False and entry["after"]["disabled"] is True


def test_a_lanes_rows_are_read_through_its_index(sqlite_store: SQLiteStore) -> None:
    from signoff.store.queries import load_queries

    connection = sqlite3.connect(sqlite_store.path)
    for query in ("lane_outbox", "lane_dead", "dead_letter_lane"):
        sql = load_queries("sqlite")[query]
        params = {"lane": "channel:x", "limit": 20, "why": "-", "now": "-"}
        [plan] = [row[3] for row in connection.execute("EXPLAIN QUERY PLAN " + sql, params)]
        assert plan == "SEARCH outbox USING INDEX outbox_by_lane (<expr>=?)", (query, plan)
    connection.close()
