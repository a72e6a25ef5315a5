"""Admin → Channels in a real browser (headless Chromium, desktop and phone): an admin adds a
webhook and sees its test delivery arrive at the receiver; adds a text bridge channel, edits it,
sends a test, disables it; a secret typed in is never shown again, on the page, in the API, the
CLI or the audit export. Every form is reached and sent with labels and the keyboard's Enter."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from standardwebhooks import Webhook as Verifier
from typer.testing import CliRunner

from signoff.cli import app
from signoff.server.serve import login_link
from signoff.store import SQLiteStore

from ..channel_admin_support import BRIDGE_SECRET, KEY, OTHER_SECRET, SETTINGS
from ..live import LiveServer
from ..receivers import Receiver
from .conftest import CHROMIUM

if not os.path.exists(CHROMIUM):
    pytest.skip(f"browser tests need Debian's Chromium at {CHROMIUM}", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="browser tests need playwright (pip install playwright)"
)
expect = sync_api.expect

SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


@pytest.fixture
def server(sqlite_store: SQLiteStore) -> Iterator[LiveServer]:
    sqlite_store.add_user("alice", role="member", actor="test")
    sqlite_store.set_address("alice", "text:wechat", "wxid_alice", actor="test")
    with LiveServer(sqlite_store, SETTINGS) as live:
        yield live


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as receiving:
        yield receiving


@pytest.fixture(params=list(SIZES))
def page(request: pytest.FixtureRequest, browser: Any, server: LiveServer) -> Iterator[Any]:
    server.user("root", "admin")
    context = browser.new_context(viewport=SIZES[request.param])
    context.set_default_timeout(10_000)
    page = context.new_page()
    page.goto(login_link(server.store, server.settings, "root"))
    page.get_by_role("button", name="Sign in as root").click()
    page.wait_for_url(re.compile(r"/$"))
    yield page
    context.close()


def test_an_admin_adds_a_webhook_and_sees_its_test_delivery(
    page: Any, server: LiveServer, receiver: Receiver
) -> None:
    page.goto(server.url + "/admin")
    page.get_by_role("navigation", name="Administration").get_by_role("link", name="Channels").click()
    page.get_by_label("URL").fill(receiver.url)
    page.get_by_label("request.decided").check()
    page.get_by_role("button", name="Add the webhook").click()
    expect(page.get_by_role("heading", name="Its signing secret")).to_be_visible()
    secret = page.locator("#webhook-secret").input_value()
    assert secret.startswith("whsec_")

    page.get_by_role("button", name="Send a test").click()
    expect(page.get_by_role("heading", name="Test sent")).to_be_visible()
    (post,) = receiver.wait_for(1)
    event = Verifier(secret).verify(post.body, post.headers)
    assert event["type"] == "webhook.test"
    expect(page.locator("#webhook-secret")).to_have_count(0)  # shown once: not after the test
    page.reload()
    assert secret not in page.content()
    [webhook] = server.store.list_webhooks()
    assert webhook.events == ("request.decided",)
    [tested] = list(server.store.audit_entries(action="webhook.tested"))
    assert tested.actor == "root" and tested.channel == "web" and tested.data["ok"] is True


def test_an_admin_adds_edits_tries_and_disables_a_channel_and_its_secret_is_never_shown_again(
    page: Any, server: LiveServer, receiver: Receiver, sqlite_store: SQLiteStore
) -> None:
    page.goto(server.url + "/admin/channels")
    page.get_by_label("Kind").select_option("text")
    page.get_by_role("button", name="Next").click()
    page.get_by_label("Name").fill("wechat")
    page.get_by_label("Platform").fill("wechat")
    page.get_by_label("Bridge's send URL").fill(receiver.url)
    page.get_by_label("Signing secret (whsec_…)").fill(BRIDGE_SECRET)
    page.get_by_label("Signing secret (whsec_…)").press("Enter")
    expect(page.get_by_role("heading", name=re.compile("^wechat"))).to_be_visible()
    expect(page.get_by_role("status").first).to_contain_text("Added the channel wechat")
    assert BRIDGE_SECRET not in page.content()
    expect(page.locator("#secret-secret-state")).to_contain_text("set")
    assert page.locator("#secret-secret").input_value() == ""

    page.get_by_label("Timeout per send (seconds)").fill("4")
    page.get_by_label("Signing secret (whsec_…)").fill(OTHER_SECRET)
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status").first).to_contain_text("Saved the channel wechat")
    stored = sqlite_store.stored_channel("wechat")
    assert stored is not None and stored.version == 2 and stored.timeout == 4.0
    assert stored.config(KEY).secret("secret") == OTHER_SECRET

    page.get_by_label("To a user").fill("alice")
    page.get_by_role("button", name="Send a test").click()
    expect(page.get_by_role("heading", name="Test sent")).to_be_visible()
    (post,) = receiver.wait_for(1)
    assert Verifier(OTHER_SECRET).verify(post.body, post.headers)["to"] == "wxid_alice"

    page.get_by_role("button", name="Disable this channel").click()
    expect(page.get_by_role("heading", name="wechat disabled")).to_be_visible()
    expect(page.get_by_role("button", name="Enable this channel")).to_be_visible()
    expect(page.get_by_role("button", name="Send a test")).to_have_count(0)
    page.goto(server.url + "/admin/channels")
    expect(page.locator("tr[data-channel=wechat]")).to_contain_text("disabled")

    for secret in (BRIDGE_SECRET, OTHER_SECRET):
        assert secret not in page.content()
    with server.client(server.user("root", "admin")) as admin:
        api = admin.get("/v1/channels").text + admin.get("/v1/channels/wechat").text
        exported = admin.get("/v1/audit/export").text
    runner = CliRunner(env={"SIGNOFF_DB": f"sqlite:///{sqlite_store.path}", "SIGNOFF_URL": None})
    listed = runner.invoke(app, ["channels", "list", "--json", "--secrets-key-file", _key_file(sqlite_store)])
    cli_export = runner.invoke(app, ["audit", "export"])
    assert listed.exit_code == 0 and cli_export.exit_code == 0, listed.output + cli_export.output
    assert '"secret": "set"' in listed.output
    for shown in (api, exported, listed.output, cli_export.output):
        assert BRIDGE_SECRET not in shown and OTHER_SECRET not in shown
    actions = [entry.action for entry in sqlite_store.audit_entries() if entry.action.startswith("channel.")]
    assert actions == ["channel.added", "channel.changed", "channel.tested", "channel.disabled"]


def _key_file(store: SQLiteStore) -> str:
    path = Path(store.path).parent / "secrets.key"
    path.write_text(KEY.text, encoding="utf-8")
    return str(path)
