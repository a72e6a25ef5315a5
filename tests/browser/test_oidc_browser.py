"""Signing in through the identity provider in a real browser (headless Chromium, desktop and
phone) against a real OpenID provider (npm oidc-provider): the sign-in page's button, the
provider's own login form, back in the inbox with the provider's groups; a request for the `dba`
group is approved; the provider takes ann out of `dba`, she signs in again, and may no longer see
or decide the next one. The sign-in pages pass axe-core. The browser reaches nothing but loopback."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from signoff.store import SQLiteStore

from ..oidc.conftest import OidcWorld
from .conftest import CHROMIUM
from .test_accessibility_browser import AXE, RUN_AXE

if not os.path.exists(CHROMIUM):
    pytest.skip(f"browser tests need Debian's Chromium at {CHROMIUM}", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="browser tests need playwright (pip install playwright)"
)
expect = sync_api.expect

SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


@pytest.fixture
def world(sqlite_store: SQLiteStore) -> Iterator[OidcWorld]:
    made = OidcWorld(sqlite_store).open()
    yield made
    made.close()


@pytest.fixture(params=list(SIZES))
def page(request: pytest.FixtureRequest, browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport=SIZES[request.param], bypass_csp=True)
    context.set_default_timeout(10_000)
    # the provider's pages import a web font: nothing leaves this machine
    context.route(
        re.compile(r"^https?://"),
        lambda route: (
            route.continue_() if urlsplit(route.request.url).hostname == "127.0.0.1" else route.abort()
        ),
    )
    opened = context.new_page()
    yield opened
    context.close()


def _axe(page: Any) -> list[str]:
    page.add_script_tag(content=AXE)
    found = page.evaluate(RUN_AXE)
    return [f"{item['id']} ({item['help']}): {node}" for item in found for node in item["nodes"]]


def test_sign_in_through_the_provider_and_decide_as_its_groups_say(world: OidcWorld, page: Any) -> None:
    page.goto(world.url + "/login")
    button = page.get_by_role("link", name="Sign in with 127.0.0.1")
    expect(button).to_be_visible()
    assert _axe(page) == []
    button.click()
    # the provider's own login form (devInteractions): any password
    page.locator("input[name=login]").fill("ann")
    page.locator("input[name=password]").fill("any")
    page.locator("input[name=password]").press("Enter")
    page.wait_for_url(world.url + "/")
    ann = world.store.get_user("ann")
    assert ann is not None and ann.groups == ("dba", "staff")

    first = world.ask("c1", ["group:dba"])
    card = page.locator(f"#card-{first}")
    expect(card).to_be_visible()
    card.get_by_role("button", name="Approve", exact=True).click()
    expect(card.locator(".outcome")).to_contain_text("Approved by ann")
    assert world.store.get_request(first).status == "approved"

    second = world.ask("c2", ["group:dba"])
    expect(page.locator(f"#card-{second}")).to_be_visible()
    world.provider.set_claims("ann", groups=["staff"])  # out of dba at the provider
    page.goto(world.url + "/login/oidc")  # signs in again: the provider still knows her
    page.wait_for_url(world.url + "/")
    expect(page.locator(f"#card-{second}")).to_have_count(0)
    refused = page.goto(f"{world.url}/requests/{second}")
    assert refused is not None and refused.status == 403
    assert world.store.get_request(second).status == "pending"
    ann = world.store.get_user("ann")
    assert ann is not None and ann.groups == ("staff",)
    assert len(list(world.store.audit_entries(action="signin.oidc"))) == 2


def test_a_failed_sign_in_is_a_clear_page(world: OidcWorld, page: Any) -> None:
    world.provider.token_mode("tamper")
    page.goto(world.url + "/login")
    page.get_by_role("link", name="Sign in with 127.0.0.1").click()
    page.locator("input[name=login]").fill("ann")
    page.locator("input[name=password]").fill("any")
    page.locator("input[name=password]").press("Enter")
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("signature is not the provider")
    expect(page.get_by_role("link", name="Try signing in again")).to_be_visible()
    assert _axe(page) == []
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"]
    assert world.store.get_user("ann") is None
