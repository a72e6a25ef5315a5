"""The Settings page's address verification in a real browser (headless Chromium, on a phone's
screen): set an address, get the code through the channel, a wrong code is refused in place, the
right one verifies it, all through htmx (the page is never reloaded), and the store agrees."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import pytest

from signoff.channels import ChannelRegistry
from signoff.channels.recording import RecordingChannel
from signoff.server.serve import login_link
from signoff.store import Store

from ..live import LiveServer
from ..test_outbox import QUICK, wait_until
from .conftest import CHROMIUM

if not os.path.exists(CHROMIUM):
    pytest.skip(f"browser tests need Debian's Chromium at {CHROMIUM}", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="browser tests need playwright (pip install playwright)"
)
expect = sync_api.expect

PHONE = {"width": 390, "height": 844}


@pytest.fixture
def chat() -> RecordingChannel:
    return RecordingChannel("chat", address_kind="slack")


@pytest.fixture
def server(sqlite_store: Store, chat: RecordingChannel) -> Iterator[LiveServer]:
    registry = ChannelRegistry()
    registry.add(chat)
    with LiveServer(sqlite_store, QUICK, channels=registry) as live:
        yield live


@pytest.fixture
def page(browser: Any, server: LiveServer) -> Iterator[Any]:
    server.user("carol")
    context = browser.new_context(viewport=PHONE)
    context.set_default_timeout(10_000)
    page = context.new_page()
    page.goto(login_link(server.store, server.settings, "carol"))
    page.get_by_role("button", name="Sign in as carol").click()
    page.wait_for_url(re.compile(r"/$"))
    yield page
    context.close()


def test_a_person_verifies_their_slack_address_on_the_settings_page(
    page: Any, server: LiveServer, chat: RecordingChannel
) -> None:
    page.goto(server.url + "/settings")
    page.evaluate("window.notReloaded = true")
    page.locator("#addresses select[name=kind]").select_option("slack")
    page.get_by_role("textbox", name="Address", exact=True).fill("U0CAROL42")
    page.get_by_role("button", name="Save").click()
    row = page.locator("#addresses tr[data-kind=slack]")
    expect(row.get_by_text("Not verified")).to_be_visible()
    expect(page.locator("#addresses .notice")).to_contain_text("A code is on its way to U0CAROL42")
    assert server.store.address_of("carol", "slack") is None
    wait_until(lambda: any(item.code is not None for item in chat.recorded))
    code = next(item.code.code for item in chat.recorded if item.code is not None)

    code_input = row.locator("input[name=code]")
    code_input.fill("000000" if code != "000000" else "111111")
    row.get_by_role("button", name="Verify").click()
    expect(page.locator("#addresses .card-error")).to_contain_text("wrong code")
    assert server.store.address_of("carol", "slack") is None

    row = page.locator("#addresses tr[data-kind=slack]")
    row.locator("input[name=code]").fill(f"{code[:3]} {code[3:]}")
    row.get_by_role("button", name="Verify").click()
    expect(page.locator("#addresses .notice")).to_contain_text(
        "Verified: requests now reach you at U0CAROL42."
    )
    expect(page.locator("#addresses tr[data-kind=slack] .badge")).to_have_text("Verified")
    expect(page.locator("#addresses input[name=code]")).to_have_count(0)
    assert page.evaluate("window.notReloaded") is True, "htmx swapped the section; no reload"
    assert server.store.address_of("carol", "slack") == "U0CAROL42"
    assert server.store.user_at("slack", "U0CAROL42") == "carol"
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page is {width}px wide on a phone"
