"""People's channel addresses: the CLI (`signoff users set-address`: an admin's, verified), the
API (a person's own waits for the code sent there; an admin sets someone else's verified), and
the inbox's settings page (set, send a new code, enter it); a verified address is one person's."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from signoff.channels import ChannelRegistry
from signoff.channels.address_code import AddressCode
from signoff.channels.contract import DeliveryError, MessageRef
from signoff.channels.recording import RecordingChannel
from signoff.errors import AlreadyExists, CodeRefused, InvalidInput
from signoff.store import SQLiteStore, Store

from .live import LiveServer
from .test_inbox import HTMX, Person
from .test_outbox import QUICK, wait_until


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
        "--as",
        "root",
    )
    assert done.returncode == 0, done.stderr
    assert "alice: slack = U123 (verified)" in done.stdout
    shown = json.loads(cli(db, "users", "addresses", "alice", "--json").stdout)
    assert {kind: entry["address"] for kind, entry in shown.items()} == {
        "email": "a@example.com",
        "slack": "U123",
        "text:wechat": "wx_9",
    }
    assert all(entry["verified"] and entry["verified_by"] == "root" for entry in shown.values())
    assert "U123  verified (root)" in cli(db, "users", "addresses", "alice").stdout
    bad = cli(db, "users", "set-address", "alice", "--text", "no-colon")
    assert bad.returncode == 2 and "PLATFORM:ID" in bad.stderr
    assert cli(db, "users", "set-address", "alice", "--remove", "slack").returncode == 0
    assert "slack" not in json.loads(cli(db, "users", "addresses", "alice", "--json").stdout)


def test_the_cli_shows_an_unverified_address_as_such(tmp_path: Path) -> None:
    db = tmp_path / "signoff.db"
    store = SQLiteStore(db)
    try:
        store.add_user("bob", role="member", actor="test")
        store.claim_address("bob", "slack", "U-BOB", via="slack")
    finally:
        store.close()
    assert "U-BOB  NOT verified" in cli(db, "users", "addresses", "bob").stdout
    assert json.loads(cli(db, "users", "addresses", "bob", "--json").stdout)["slack"]["verified"] is False


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
def chat() -> RecordingChannel:
    """A channel that sends to people's `slack` addresses and keeps what it sent (codes too)."""
    return RecordingChannel("chat", address_kind="slack")


@pytest.fixture
def server(store: Store, chat: RecordingChannel) -> Iterator[LiveServer]:
    registry = ChannelRegistry()
    registry.add(chat)
    with LiveServer(store, QUICK, channels=registry) as live:
        yield live


def sent_code(chat: RecordingChannel, target: str, count: int = 1) -> str:
    """The newest code `chat` sent to `target` (waiting for the `count`th)."""
    wait_until(lambda: len(codes_to(chat, target)) >= count)
    return codes_to(chat, target)[-1]


def codes_to(chat: RecordingChannel, target: str) -> list[str]:
    return [item.code.code for item in chat.recorded if item.code is not None and item.target == target]


def test_the_api_lets_a_person_claim_and_verify_their_own_address(
    server: LiveServer, chat: RecordingChannel
) -> None:
    alice = server.user("alice")
    server.user("bob")
    with server.client(alice) as client:
        put = client.put("/v1/users/alice/addresses/slack", json={"address": "U-ALICE"})
        assert put.status_code == 200, put.text
        assert put.json() == {
            "user": "alice",
            "kind": "slack",
            "address": "U-ALICE",
            "verified": False,
            "code_via": "chat",
            "code_expires_at": None,
        }
        code = sent_code(chat, "U-ALICE")
        message = next(item.code for item in chat.recorded if item.code is not None)
        assert message.text.startswith(f"Your signoff verification code is {code}\n")
        assert "signoff user alice" in message.text and "15 minutes" in message.text
        assert client.get("/v1/users/alice/addresses").json() == {
            "user": "alice",
            "addresses": {"slack": "U-ALICE"},
            "verified": {"slack": False},
        }
        wrong = client.post(
            "/v1/users/alice/addresses/slack/verify", json={"code": f"{(int(code) + 1) % 10**6:06d}"}
        )
        assert wrong.status_code == 422 and wrong.json()["error"]["type"] == "CodeRefused"
        assert "4 tries left" in wrong.json()["error"]["message"]
        again = client.post("/v1/users/alice/addresses/slack/code")
        assert again.status_code == 429 and int(again.headers["retry-after"]) >= 1
        done = client.post("/v1/users/alice/addresses/slack/verify", json={"code": code})
        assert done.status_code == 200, done.text
        assert done.json()["verified"] is True
        reused = client.post("/v1/users/alice/addresses/slack/verify", json={"code": code})
        assert reused.status_code == 422
        assert client.post("/v1/users/bob/addresses/slack/verify", json={"code": code}).status_code == 403
        assert client.put("/v1/users/bob/addresses/slack", json={"address": "U9"}).status_code == 403
        assert client.put("/v1/users/alice/addresses/email", json={"address": "nope"}).status_code == 422
    assert server.store.user_at("slack", "U-ALICE") == "alice"
    assert "access.refused" in [entry.action for entry in server.store.audit_entries()]


def test_an_admin_sets_someone_elses_address_verified(server: LiveServer, chat: RecordingChannel) -> None:
    bob = server.user("bob")
    server.user("dave")
    admin = server.user("root", "admin")
    with server.client(bob) as client:  # bob claims dave's Slack id
        assert client.put("/v1/users/bob/addresses/slack", json={"address": "U-DAVE"}).status_code == 200
    with server.client(admin) as client:
        put = client.put("/v1/users/dave/addresses/slack", json={"address": "U-DAVE"})
        assert put.status_code == 200, put.text
        assert put.json()["verified"] is True and put.json()["code_via"] is None
        assert client.get("/v1/users/bob/addresses").json()["addresses"] == {}, "bob's claim is dropped"
        taken = client.put("/v1/users/bob/addresses/slack", json={"address": "U-DAVE"})
        assert taken.status_code == 409
        mine = client.put("/v1/users/root/addresses/slack", json={"address": "U-ROOT"})
        assert mine.json()["verified"] is False, "an admin's own address is verified by its code"
        assert client.delete("/v1/users/dave/addresses/slack").json() == {"removed": True}
    with server.client(bob) as client:
        assert client.post("/v1/users/bob/addresses/slack/code").status_code == 404
    assert server.store.addresses_of("dave") == {}


def test_bob_cannot_take_daves_verified_address_through_the_api(server: LiveServer) -> None:
    bob = server.user("bob")
    server.user("dave")
    server.store.set_address("dave", "slack", "U-DAVE", actor="root")
    with server.client(bob) as client:
        taken = client.put("/v1/users/bob/addresses/slack", json={"address": "U-DAVE"})
    assert taken.status_code == 409
    assert taken.json()["error"]["message"] == (
        "the slack address 'U-DAVE' is already verified for another signoff user"
    )
    assert server.store.user_at("slack", "U-DAVE") == "dave"
    assert "user.address_claim_refused" in [entry.action for entry in server.store.audit_entries()]


def test_no_code_without_a_channel_for_the_kind(server: LiveServer) -> None:
    carol = server.user("carol")
    with server.client(carol) as client:
        put = client.put("/v1/users/carol/addresses/feishu", json={"address": "ou_carol"})
        assert put.json()["verified"] is False and put.json()["code_via"] is None
        refused = client.post("/v1/users/carol/addresses/feishu/code")
        assert refused.status_code == 422
        assert (
            "no channel on this server sends codes to feishu addresses" in refused.json()["error"]["message"]
        )


def test_the_settings_page_sets_verifies_and_removes_ones_own_address(
    server: LiveServer, chat: RecordingChannel
) -> None:
    person = Person(server, "carol")
    try:
        page = person.client.get("/settings")
        assert page.status_code == 200 and "None yet" in page.text
        saved = person.client.post(
            "/settings/addresses", data={"kind": "slack", "address": "U77", "csrf_token": person.csrf}
        )
        assert saved.status_code == 303
        assert server.store.addresses_of("carol") == {"slack": "U77"}
        assert server.store.address_of("carol", "slack") is None
        code = sent_code(chat, "U77")
        shown = person.client.get("/settings").text
        assert "Not verified" in shown and 'name="code"' in shown and "Send a new code" in shown
        wrong = person.client.post(
            "/settings/addresses/verify",
            data={
                "kind": "slack",
                "code": "000000" if code != "000000" else "111111",
                "csrf_token": person.csrf,
            },
            headers=HTMX,
        )
        assert wrong.status_code == 422
        assert 'id="addresses"' in wrong.text and "wrong code" in wrong.text
        too_soon = person.client.post(
            "/settings/addresses/code", data={"kind": "slack", "csrf_token": person.csrf}, headers=HTMX
        )
        assert too_soon.status_code == 429 and "ask for another in" in too_soon.text
        no_csrf = person.client.post("/settings/addresses/verify", data={"kind": "slack", "code": code})
        assert no_csrf.status_code in (401, 403)
        verified = person.client.post(
            "/settings/addresses/verify",
            data={"kind": "slack", "code": code, "csrf_token": person.csrf},
            headers=HTMX,
        )
        assert verified.status_code == 200
        assert "Verified: requests now reach you at U77." in verified.text
        assert re.search(r"badge-approved\">Verified<", verified.text)
        assert server.store.address_of("carol", "slack") == "U77"
        text = person.client.post(
            "/settings/addresses",
            data={"kind": "text", "platform": "wechat", "address": "wx_1", "csrf_token": person.csrf},
        )
        assert text.status_code == 303
        assert "No channel on this server can send it a code" in person.client.get("/settings").text
        refused = person.client.post("/settings/addresses", data={"kind": "slack", "address": "U78"})
        assert refused.status_code in (401, 403)
        person.client.post(
            "/settings/addresses", data={"kind": "slack", "remove": "1", "csrf_token": person.csrf}
        )
        assert server.store.addresses_of("carol") == {"text:wechat": "wx_1"}
    finally:
        person.close()


def test_a_code_goes_only_to_the_address_claimed(server: LiveServer, chat: RecordingChannel) -> None:
    """A claim changed before its code went out is not sent the code; the new one is."""
    store = server.store
    store.add_user("erin", role="member", actor="test")
    with httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {server.user('erin')}"}
    ) as erin:
        erin.put("/v1/users/erin/addresses/slack", json={"address": "U-ONE"})
        erin.put("/v1/users/erin/addresses/slack", json={"address": "U-TWO"})
    code = sent_code(chat, "U-TWO")
    assert store.verify_address("erin", "slack", code).address == "U-TWO"
    assert len(codes_to(chat, "U-ONE")) <= 1  # sent before the change, or skipped after it
    with pytest.raises(CodeRefused, match="verified already"):
        store.verify_address("erin", "slack", code)


class RefusingChannel(RecordingChannel):
    """Sends to `slack` addresses, but the platform refuses the code for good."""

    async def send_code(self, message: AddressCode, target: str) -> MessageRef:
        raise DeliveryError(f"no user {target} here", retry=False)


def test_the_settings_page_says_when_a_code_could_not_be_sent(sqlite_store: SQLiteStore) -> None:
    registry = ChannelRegistry()
    registry.add(RefusingChannel("chat", address_kind="slack"))
    with LiveServer(sqlite_store, QUICK, channels=registry) as server:
        person = Person(server, "carol")
        try:
            person.client.post(
                "/settings/addresses", data={"kind": "slack", "address": "U-GONE", "csrf_token": person.csrf}
            )
            wait_until(
                lambda: (row := sqlite_store.last_code_delivery("carol", "U-GONE")) and row.state == "dead"
            )
            page = person.client.get("/settings").text
            assert (
                "The code could not be sent (no user U-GONE here): send a new one, or ask an admin." in page
            )
            assert sqlite_store.address_of("carol", "slack") is None
            with server.client(server.user("root", "admin")) as admin:
                [dead] = admin.get("/v1/outbox/dead").json()
            assert (dead["message"], dead["request_id"], dead["target"]) == ("code", None, "U-GONE")
        finally:
            person.close()
    shown = cli(Path(sqlite_store.path), "outbox", "dead").stdout
    assert "code for carol  address.code  chat → U-GONE  (no user U-GONE here)" in shown
