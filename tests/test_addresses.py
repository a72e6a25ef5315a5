"""People's channel addresses: the CLI (`signoff users set-address`), the API (the person
themself or an admin), and the inbox's settings page; an address is one person's."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from signoff.errors import AlreadyExists, InvalidInput
from signoff.store import SQLiteStore, Store

from .live import LiveServer
from .test_inbox import Person


def cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "signoff.cli", "--db", f"sqlite:///{db}", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_cli_sets_lists_and_removes_addresses(tmp_path: Path) -> None:
    db = tmp_path / "signoff.db"
    assert cli(db, "users", "add", "alice").returncode == 0
    done = cli(
        db,
        "users",
        "set-address",
        "alice",
        "--slack",
        "U123",
        "--email",
        "a@example.com",
        "--text",
        "wechat:wx_9",
    )
    assert done.returncode == 0, done.stderr
    shown = cli(db, "users", "addresses", "alice", "--json")
    assert json.loads(shown.stdout) == {"email": "a@example.com", "slack": "U123", "text:wechat": "wx_9"}
    bad = cli(db, "users", "set-address", "alice", "--text", "no-colon")
    assert bad.returncode == 2 and "PLATFORM:ID" in bad.stderr
    assert cli(db, "users", "set-address", "alice", "--remove", "slack").returncode == 0
    assert "slack" not in json.loads(cli(db, "users", "addresses", "alice", "--json").stdout)


def test_an_address_is_one_persons(sqlite_store: SQLiteStore) -> None:
    for name in ("alice", "bob"):
        sqlite_store.add_user(name, role="member", actor="test")
    sqlite_store.set_address("alice", "slack", "U1", actor="test")
    with pytest.raises(AlreadyExists, match="already alice's"):
        sqlite_store.set_address("bob", "slack", "U1", actor="test")
    assert sqlite_store.user_at("slack", "U1") == "alice"
    with pytest.raises(InvalidInput):
        sqlite_store.set_address("alice", "pager", "x", actor="test")
    with pytest.raises(InvalidInput):
        sqlite_store.set_address("alice", "slack", "has space", actor="test")
    with pytest.raises(InvalidInput):
        sqlite_store.set_address("nobody", "slack", "U2", actor="test")
    assert [entry.action for entry in sqlite_store.audit_entries()].count("user.address_set") == 1


@pytest.fixture
def server(store: Store) -> Iterator[LiveServer]:
    with LiveServer(store) as live:
        yield live


def test_the_api_lets_a_person_set_their_own_addresses_only(server: LiveServer) -> None:
    alice = server.user("alice")
    server.user("bob")
    admin = server.user("root", "admin")
    with server.client(alice) as client:
        put = client.put("/v1/users/alice/addresses/feishu", json={"address": "ou_abc"})
        assert put.status_code == 200, put.text
        assert put.json() == {"user": "alice", "kind": "feishu", "address": "ou_abc"}
        assert client.get("/v1/users/alice/addresses").json() == {
            "user": "alice",
            "addresses": {"feishu": "ou_abc"},
        }
        assert client.put("/v1/users/bob/addresses/slack", json={"address": "U9"}).status_code == 403
        assert client.put("/v1/users/alice/addresses/email", json={"address": "nope"}).status_code == 422
    with server.client(admin) as client:
        assert client.put("/v1/users/bob/addresses/slack", json={"address": "U9"}).status_code == 200
        assert client.get("/v1/users/bob/addresses").json()["addresses"] == {"slack": "U9"}
        taken = client.put("/v1/users/alice/addresses/slack", json={"address": "U9"})
        assert taken.status_code == 409
        assert client.delete("/v1/users/bob/addresses/slack").json() == {"removed": True}
    assert server.store.addresses_of("bob") == {}


def test_the_settings_page_sets_and_removes_ones_own_address(server: LiveServer) -> None:
    person = Person(server, "carol")
    try:
        page = person.client.get("/settings")
        assert page.status_code == 200 and "None yet" in page.text
        saved = person.client.post(
            "/settings/addresses", data={"kind": "slack", "address": "U77", "csrf_token": person.csrf}
        )
        assert saved.status_code == 303
        assert server.store.addresses_of("carol") == {"slack": "U77"}
        text = person.client.post(
            "/settings/addresses",
            data={"kind": "text", "platform": "wechat", "address": "wx_1", "csrf_token": person.csrf},
        )
        assert text.status_code == 303
        assert "wx_1" in person.client.get("/settings").text
        refused = person.client.post("/settings/addresses", data={"kind": "slack", "address": "U78"})
        assert refused.status_code in (401, 403)
        person.client.post(
            "/settings/addresses", data={"kind": "slack", "remove": "1", "csrf_token": person.csrf}
        )
        assert server.store.addresses_of("carol") == {"text:wechat": "wx_1"}
    finally:
        person.close()
