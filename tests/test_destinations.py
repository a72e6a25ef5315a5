"""Where outbound POSTs may go: a webhook's URL or a text bridge's `send_url` that names a
loopback, private, link-local, unique-local, unspecified or metadata destination is refused when
it is configured (422 from the API, an error from the CLI and the channels file) and, for a name,
after resolving it, at every connection; `--allow-private-webhooks` lets them through."""

from __future__ import annotations

import asyncio
import base64
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from typer.testing import CliRunner

from signoff.channels import ChannelRegistry, parse_config
from signoff.channels.contract import DeliveryError
from signoff.channels.notice import build_notice
from signoff.channels.text import TextChannel
from signoff.cli import app
from signoff.destinations import Destinations, PrivateDestination
from signoff.destinations.addresses import host_address
from signoff.destinations.guarded_aiohttp import connector, refusal_in
from signoff.errors import ConfigError, InvalidInput
from signoff.store import Store

from .live import LiveServer
from .receivers import Receiver
from .test_outbox import QUICK, ask, wait_until

PRIVATE = [
    "http://127.0.0.1/hook",
    "http://127.0.0.1:8765/v1/requests",
    "http://localhost/hook",
    "http://LOCALHOST./hook",
    "http://api.localhost/hook",
    "http://[::1]/hook",
    "http://169.254.169.254/latest/meta-data/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://[::ffff:127.0.0.1]/hook",
    "http://[::ffff:169.254.169.254]/",
    "http://2130706433/",
    "http://0x7f.1/",
    "http://127.1/",
    "http://0177.0.0.1/",
    "http://0x7f000001/",
    "http://10.0.0.5/",
    "http://172.16.3.4/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",
    "http://100.100.100.200/latest/meta-data/",
    "http://[fd00:ec2::254]/",
    "http://[fd12:3456::1]/",
    "http://[fe80::1%25eth0]/",
    "http://0.0.0.0/",
    "http://[::]/",
    "http://224.0.0.1/",
    "http://[64:ff9b::7f00:1]/",
    "http://[2002:7f00:1::1]/",
    "http://[::7f00:1]/",
    "https://printer.local/",
    "https://bridge.internal/send",
]
PUBLIC = [
    "https://hooks.example.com/signoff",
    "http://93.184.215.14/hook",
    "https://[2606:4700:4700::1111]/hook",
    "https://user@hooks.example.com:8443/x?y=1",
]
ADMIN_TOKEN_ROLE = "admin"


@pytest.mark.parametrize("url", PRIVATE)
def test_a_private_destination_is_refused_when_configured_and_allowed_with_the_option(url: str) -> None:
    with pytest.raises(InvalidInput, match="allow-private-webhooks") as refused:
        Destinations().check_url(url)
    assert refused.value.status_code == 422
    assert Destinations(allow_private=True).check_url(url) == url


@pytest.mark.parametrize("url", PUBLIC)
def test_a_public_destination_is_accepted(url: str) -> None:
    assert Destinations().check_url(url) == url


@pytest.mark.parametrize(
    "url", ["ftp://hooks.example.com/", "hooks.example.com/x", "http:///x", "http://h:99999/"]
)
def test_a_url_that_is_not_http_to_a_host_is_refused_even_when_private_is_allowed(url: str) -> None:
    with pytest.raises(InvalidInput):
        Destinations(allow_private=True).check_url(url)


def test_numeric_spellings_of_ipv4_are_read_as_resolvers_read_them() -> None:
    for spelling in ("2130706433", "0x7f.1", "127.1", "0177.0.0.1", "0x7f000001"):
        assert str(host_address(spelling)) == "127.0.0.1"
    assert host_address("hooks.example.com") is None


# -- registering: the store, the API, the CLI, the channels file --------------------------------


def test_the_store_refuses_a_private_webhook_and_stores_nothing(sqlite_store: Store) -> None:
    with pytest.raises(InvalidInput, match="loopback"):
        sqlite_store.add_webhook("http://127.0.0.1:9/hook", actor="test")
    assert sqlite_store.list_webhooks() == []
    assert not [entry for entry in sqlite_store.audit_entries() if entry.action == "webhook.added"]
    sqlite_store.add_webhook("http://127.0.0.1:9/hook", allow_private=True, actor="test")
    assert len(sqlite_store.list_webhooks()) == 1


@pytest.mark.parametrize("allowed", [False, True])
def test_the_api_answers_422_for_each_private_form_unless_the_server_allows_them(
    sqlite_store: Store, allowed: bool
) -> None:
    with (
        LiveServer(sqlite_store, allow_private=allowed) as server,
        server.client(server.user("root", ADMIN_TOKEN_ROLE)) as admin,
    ):
        for url in PRIVATE:
            answer = admin.post("/v1/webhooks", json={"url": url, "events": ["request.decided"]})
            if allowed:
                assert answer.status_code == 201, (url, answer.text)
            else:
                assert answer.status_code == 422, (url, answer.text)
                assert answer.json()["error"]["type"] == "InvalidInput"
                assert "--allow-private-webhooks" in answer.json()["error"]["message"]
        public = admin.post("/v1/webhooks", json={"url": PUBLIC[0], "events": ["request.decided"]})
        assert public.status_code == 201
    assert len(sqlite_store.list_webhooks()) == (len(PRIVATE) if allowed else 0) + 1


def test_the_cli_refuses_a_private_webhook_unless_told(tmp_path: Path) -> None:
    runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None, "SIGNOFF_ALLOW_PRIVATE_WEBHOOKS": None})
    db = ["--db", str(tmp_path / "db.sqlite")]
    refused = runner.invoke(app, [*db, "webhooks", "add", "http://169.254.169.254/latest/", "--as", "ops"])
    assert refused.exit_code != 0
    assert "a cloud metadata address" in refused.output
    assert "--allow-private-webhooks" in refused.output
    listed = runner.invoke(app, [*db, "webhooks", "list"])
    assert "169.254" not in listed.output
    added = runner.invoke(
        app, [*db, "webhooks", "add", "http://127.0.0.1:9/hook", "--allow-private-webhooks", "--as", "ops"]
    )
    assert added.exit_code == 0, added.output
    assert "Added webhook whk_" in added.output


def text_settings(send_url: str) -> dict[str, Any]:
    secret = "whsec_" + base64.b64encode(b"a bridge secret of 32 bytes, ok.").decode()
    return {"w": {"kind": "text", "platform": "wechat", "send_url": send_url, "secret": secret}}


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/send", "http://[::ffff:127.0.0.1]/", "http://0x7f.1/"])
def test_a_text_channel_with_a_private_send_url_does_not_start_unless_allowed(url: str) -> None:
    with pytest.raises(ConfigError, match="send_url goes to a loopback address"):
        ChannelRegistry.from_configs(parse_config(text_settings(url)))
    allowed = parse_config(text_settings(url), destinations=Destinations(allow_private=True))
    assert ChannelRegistry.from_configs(allowed).get("w") is not None


def test_signoff_serve_refuses_such_a_channels_file(tmp_path: Path) -> None:
    import yaml

    path = tmp_path / "channels.yaml"
    path.write_text(yaml.safe_dump({"channels": text_settings("http://10.1.2.3/send")}), encoding="utf-8")
    runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None, "SIGNOFF_ALLOW_PRIVATE_WEBHOOKS": None})
    listed = runner.invoke(app, ["channels", "list", "--channels", str(path)])
    assert listed.exit_code != 0
    assert "send_url goes to a private address: 10.1.2.3" in listed.output
    allowed = runner.invoke(app, ["channels", "list", "--channels", str(path), "--allow-private-webhooks"])
    assert allowed.exit_code == 0, allowed.output


# -- sending: after resolving, at every connection --------------------------------------------


FAKE_NAME = "receiver.signoff-test"
"""A name that reads as public, resolved (by the patched resolver) to the receiver on loopback:
what a name whose DNS answer is, or turns into, a private address does."""


@pytest.fixture
def fake_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    """`FAKE_NAME` resolves to 127.0.0.1; any other name is unknown (no query leaves the host)."""
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name == FAKE_NAME:
            name = "127.0.0.1"
        if name is not None and host_address(name) is None:
            raise socket.gaierror(socket.EAI_NONAME, f"{name}: not in the tests' resolver")
        return real(name, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as running:
        yield running


def renamed(url: str) -> str:
    return url.replace("127.0.0.1", FAKE_NAME)


@pytest.mark.usefixtures("fake_dns")
def test_a_webhook_whose_name_resolves_to_loopback_is_refused_at_send_time_and_dead_lettered(
    sqlite_store: Store, receiver: Receiver
) -> None:
    url = renamed(receiver.url)
    assert Destinations().check_url(url) == url  # nothing in the URL itself says it is private
    sqlite_store.add_user("alice", role="member", actor="test")
    sqlite_store.add_webhook(url, events=["request.created"], actor="test")
    with LiveServer(sqlite_store, QUICK, allow_private=False, loop="asyncio"):
        request_id = ask(sqlite_store, call="dns", approvers=("alice",))
        wait_until(lambda: [row.state for row in sqlite_store.outbox_for(request_id)] == ["dead"])
    [row] = sqlite_store.outbox_for(request_id)
    assert row.attempts == 1  # refused for good: not retried
    assert row.last_error is not None
    assert f"{FAKE_NAME} resolves to a loopback address (127.0.0.1)" in row.last_error
    assert receiver.posts == []


@pytest.mark.usefixtures("fake_dns")
def test_the_same_webhook_is_delivered_by_a_server_that_allows_private_destinations(
    sqlite_store: Store, receiver: Receiver
) -> None:
    sqlite_store.add_user("alice", role="member", actor="test")
    sqlite_store.add_webhook(renamed(receiver.url), events=["request.created"], actor="test")
    with LiveServer(sqlite_store, QUICK, allow_private=True, loop="asyncio"):
        ask(sqlite_store, call="dns", approvers=("alice",))
        (post,) = receiver.wait_for(1)
    assert post.headers["webhook-id"].startswith("msg_")


def test_a_webhook_stored_before_the_check_is_refused_at_send_time(
    sqlite_store: Store, receiver: Receiver
) -> None:
    sqlite_store.add_user("alice", role="member", actor="test")
    sqlite_store.add_webhook(receiver.url, events=["request.created"], allow_private=True, actor="test")
    with LiveServer(sqlite_store, QUICK, allow_private=False):
        request_id = ask(sqlite_store, call="old", approvers=("alice",))
        wait_until(lambda: [row.state for row in sqlite_store.outbox_for(request_id)] == ["dead"])
    [row] = sqlite_store.outbox_for(request_id)
    assert row.last_error is not None and "a loopback address: 127.0.0.1" in row.last_error
    assert receiver.posts == []


def test_each_connection_is_checked_even_for_an_address_in_the_url(receiver: Receiver) -> None:
    """aiohttp skips its resolver for an address in the URL: the socket's own check refuses it."""

    async def post(destinations: Destinations) -> int | PrivateDestination | None:
        async with aiohttp.ClientSession(connector=connector(destinations)) as session:
            try:
                async with session.post(receiver.url, data=b"{}") as answer:
                    return answer.status
            except aiohttp.ClientError as exc:
                return refusal_in(exc)

    refused = asyncio.run(post(Destinations()))
    assert isinstance(refused, PrivateDestination)
    assert "a loopback address (127.0.0.1)" in refused.message
    assert receiver.posts == []
    assert asyncio.run(post(Destinations(allow_private=True))) == 200


@pytest.mark.usefixtures("fake_dns")
@pytest.mark.parametrize("allowed", [False, True])
def test_a_text_bridge_whose_name_resolves_to_loopback_gets_nothing_unless_allowed(
    sqlite_store: Store, receiver: Receiver, allowed: bool
) -> None:
    secret = "whsec_" + base64.b64encode(b"a bridge secret of 32 bytes, ok.").decode()
    channel = TextChannel(
        "wechat",
        platform="wechat",
        send_url=renamed(receiver.url),
        secret=secret,
        destinations=Destinations(allow_private=allowed),
    )
    sqlite_store.add_user("alice", role="member", actor="test")
    request = sqlite_store.get_request(ask(sqlite_store, call="bridge", approvers=("alice",)))
    notice = build_notice(request, approver="alice", link=None, request_url="http://signoff/r")

    async def send() -> Any:
        try:
            return await channel.send(notice, "wxid_alice")
        finally:
            await channel.close()

    if allowed:
        assert asyncio.run(send())["id"].startswith("msg_")
        assert len(receiver.posts) == 1
        return
    with pytest.raises(DeliveryError, match="resolves to a loopback address") as refused:
        asyncio.run(send())
    assert refused.value.retry is False
    assert receiver.posts == []
