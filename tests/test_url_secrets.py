"""Credentials inside a configured URL (`https://user:secret@host/…?token=…`) never reach what a
person reads: the API's webhooks and channels, the CLI's lists, the audit log and its export,
delivery errors. The sender still uses the whole URL: the receiver gets the credentials."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from signoff.channels import ChannelRegistry, parse_config
from signoff.channels.notice import build_notice
from signoff.channels.text import TextChannel
from signoff.cli import app
from signoff.destinations import Destinations
from signoff.destinations.masking import masked_in, shown_url
from signoff.store import SQLiteStore, Store

from .live import LiveServer
from .receivers import Receiver
from .test_outbox import QUICK, ask

PASSWORD = "pa55-w0rd-s3cret"
TOKEN = "tok-9f8e7d-s3cret"
LOCAL = Destinations(allow_private=True)
BRIDGE_SECRET = "whsec_" + base64.b64encode(b"a bridge secret of 32 bytes, ok.").decode()


def with_credentials(receiver: Receiver) -> str:
    return receiver.url.replace("http://", f"http://hookuser:{PASSWORD}@") + f"?token={TOKEN}&kind=all"


def leaks(text: str) -> bool:
    return PASSWORD in text or TOKEN in text


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "https://user:pw@hooks.example.com/in?token=abc&event=all",
            "https://***@hooks.example.com/in?token=***&event=all",
        ),
        ("https://ghp_TOKEN:x-oauth-basic@example.com/x", "https://***@example.com/x"),
        ("https://ghp_TOKEN@example.com/x", "https://***@example.com/x"),
        (
            "https://h.example.com/x?api_key=k&X-Amz-Signature=s&sig=1&Secret=2&page=3",
            "https://h.example.com/x?api_key=***&X-Amz-Signature=***&sig=***&Secret=***&page=3",
        ),
        ("https://h.example.com/x?password=&a=b", "https://h.example.com/x?password=&a=b"),
        ("https://h.example.com/plain", "https://h.example.com/plain"),
        ("http://[::1]:8080/a?access_token=t#top", "http://[::1]:8080/a?access_token=***#top"),
        ("http://h:99999/x?token=t", "***"),
        ("sqlite:////var/lib/signoff.db", "sqlite:////var/lib/signoff.db"),
        (
            "postgresql://signoff:pw@db.internal/signoff?sslkey=/k",
            "postgresql://***@db.internal/signoff?sslkey=***",
        ),
        ("//u:p@h.example.com/x", "//***@h.example.com/x"),
    ],
)
def test_one_masking_function_hides_what_a_url_carries(url: str, shown: str) -> None:
    assert shown_url(url) == shown


def test_a_message_that_quotes_the_url_has_its_secrets_hidden() -> None:
    url = f"https://u:{PASSWORD}@h.example.com/?token={TOKEN}"
    said = f"InvalidURL: {url} (user u, password {PASSWORD})"
    assert not leaks(masked_in(said, url))


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as running:
        yield running


def test_the_api_cli_and_audit_never_show_a_webhooks_credentials_and_the_receiver_gets_them(
    sqlite_path: Path, receiver: Receiver
) -> None:
    store = SQLiteStore(sqlite_path)
    try:
        store.add_user("alice", role="member", actor="test")
        url = with_credentials(receiver)
        with LiveServer(store, QUICK) as server, server.client(server.user("root", "admin")) as admin:
            added = admin.post("/v1/webhooks", json={"url": url, "events": ["request.created"]})
            assert added.status_code == 201, added.text
            assert (
                added.json()["url"] == receiver.url.replace("http://", "http://***@") + "?token=***&kind=all"
            )
            listed = admin.get("/v1/webhooks")
            exported = admin.get("/v1/audit/export")
            audit = admin.get("/v1/audit")
            ask(store, call="creds", approvers=("alice",))
            (post,) = receiver.wait_for(1)
        for answer in (listed, exported, audit):
            assert answer.status_code == 200, answer.text
        for answer in (added, listed, exported, audit):
            assert not leaks(answer.text), answer.text
        assert "webhook.added" in exported.text
        basic = base64.b64encode(f"hookuser:{PASSWORD}".encode()).decode()
        assert post.headers["authorization"] == f"Basic {basic}"
        assert post.path == f"/hook?token={TOKEN}&kind=all"
        [webhook] = store.list_webhooks()
        assert webhook.url == url  # kept whole: the sender needs it
        assert not leaks(repr(webhook))
    finally:
        store.close()
    runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None})
    db = ["--db", str(sqlite_path)]
    for command in (["webhooks", "list"], ["webhooks", "list", "--json"], ["audit", "export"]):
        shown = runner.invoke(app, [*db, *command])
        assert shown.exit_code == 0, shown.output
        assert not leaks(shown.output), (command, shown.output)
    assert "?token=***&kind=all" in runner.invoke(app, [*db, "webhooks", "list"]).output


def test_the_cli_adding_a_webhook_stores_it_whole_and_audits_it_masked(tmp_path: Path) -> None:
    runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None})
    db = ["--db", str(tmp_path / "db.sqlite")]
    url = f"https://ops:{PASSWORD}@hooks.example.com/in?key={TOKEN}"
    added = runner.invoke(app, [*db, "webhooks", "add", url, "--as", "ops"])
    assert added.exit_code == 0, added.output
    assert not leaks(added.output)
    exported = runner.invoke(app, [*db, "audit", "export"])
    assert "webhook.added" in exported.output and not leaks(exported.output)
    store = SQLiteStore(tmp_path / "db.sqlite")
    try:
        assert store.list_webhooks()[0].url == url
    finally:
        store.close()


def text_channels(send_url: str) -> dict[str, object]:
    return {"wechat": {"kind": "text", "platform": "wechat", "send_url": send_url, "secret": BRIDGE_SECRET}}


def test_a_text_bridges_send_url_is_shown_masked_and_used_whole(
    tmp_path: Path, sqlite_store: Store, receiver: Receiver
) -> None:
    url = receiver.url.replace("http://", f"http://bridge:{PASSWORD}@") + f"?key={TOKEN}"
    path = tmp_path / "channels.yaml"
    path.write_text(yaml.safe_dump({"channels": text_channels(url)}), encoding="utf-8")
    runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None, "SIGNOFF_CHANNELS": None})
    listed = runner.invoke(app, ["channels", "list", "--channels", str(path), "--allow-private-webhooks"])
    assert listed.exit_code == 0, listed.output
    assert "?key=***" in listed.output and not leaks(listed.output)
    registry = ChannelRegistry.from_configs(parse_config(text_channels(url), destinations=LOCAL))
    with LiveServer(sqlite_store, QUICK, channels=registry) as server:
        with server.client(server.user("root", "admin")) as admin:
            channels = admin.get("/v1/channels")
        assert channels.status_code == 200 and not leaks(channels.text)
        assert json.loads(channels.text)[0]["settings"]["send_url"].endswith("?key=***")
    channel = registry.get("wechat")
    assert isinstance(channel, TextChannel)
    sqlite_store.add_user("alice", role="member", actor="test")
    request = sqlite_store.get_request(ask(sqlite_store, call="bridge", approvers=("alice",)))

    async def send() -> None:
        try:
            await channel.send(build_notice(request, approver="alice", link=None, request_url="-"), "wxid_a")
        finally:
            await channel.close()

    asyncio.run(send())
    (post,) = receiver.wait_for(1)
    assert post.path == f"/hook?key={TOKEN}"
    assert (
        post.headers["authorization"] == "Basic " + base64.b64encode(f"bridge:{PASSWORD}".encode()).decode()
    )
