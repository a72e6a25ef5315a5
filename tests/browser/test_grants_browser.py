"""Standing grants in a real browser (headless Chromium, at desktop and phone sizes): approve a
card "+ like this for 30m", the agent's next same call is approved at once, the grant is listed
on Settings and revoked there (through htmx), and the call after is asked again."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import pytest

from signoff import RuleSet
from signoff.server.serve import login_link
from signoff.store import Store

from ..live import LiveServer
from ..test_outbox import QUICK
from .conftest import CHROMIUM

if not os.path.exists(CHROMIUM):
    pytest.skip(f"browser tests need Debian's Chromium at {CHROMIUM}", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="browser tests need playwright (pip install playwright)"
)
expect = sync_api.expect

SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
RULES = RuleSet.from_dict(
    {"tools": {"deploy": {"requires_approval": True, "approvers": ["alice"], "max_grant": "1h"}}}
)


@pytest.fixture
def server(sqlite_store: Store) -> Iterator[LiveServer]:
    sqlite_store.replace_rules(RULES, actor="test")
    with LiveServer(sqlite_store, QUICK) as live:
        yield live


@pytest.fixture(params=sorted(SIZES))
def page(request: pytest.FixtureRequest, browser: Any, server: LiveServer) -> Iterator[Any]:
    server.user("alice")
    context = browser.new_context(viewport=SIZES[request.param])
    context.set_default_timeout(10_000)
    page = context.new_page()
    page.goto(login_link(server.store, server.settings, "alice"))
    page.get_by_role("button", name="Sign in as alice").click()
    page.wait_for_url(re.compile(r"/$"))
    yield page
    context.close()


def test_a_grant_is_given_on_a_card_and_revoked_on_settings(page: Any, server: LiveServer) -> None:
    bot = server.client(server.user("bot", "agent"))

    def call(call_id: str) -> dict[str, Any]:
        body = {"thread_id": "t", "tool_call_id": call_id, "tool": "deploy", "args": {"env": "prod"}}
        response = bot.post("/v1/requests", json=body)
        assert response.status_code == 201, response.text
        answer: dict[str, Any] = response.json()
        return answer

    first = call("c0")
    page.goto(server.url + "/")
    card = page.locator(f"#card-{first['id']}")
    grant_button = card.get_by_role("button", name="+ like this for 30m")
    expect(grant_button).to_be_visible()
    box = grant_button.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= page.viewport_size["width"]
    grant_button.click()
    # the decision's own answer, or the live update that may have replaced it first
    expect(page.locator(f"#card-{first['id']} .outcome")).to_contain_text("Approved by alice")
    assert server.store.get_request(first["id"]).granted_id is not None
    covered = call("c1")
    assert covered["status"] == "approved" and covered["grant_id"]

    page.goto(server.url + "/settings")
    page.evaluate("window.notReloaded = true")
    row = page.locator(f"#grants tr[data-grant={covered['grant_id']}]")
    expect(row).to_contain_text("deploy")
    expect(row).to_contain_text("the same args")
    row.get_by_role("button", name="Revoke").click()
    expect(page.locator("#grants .notice")).to_contain_text("Revoked")
    expect(page.locator("#grants")).to_contain_text("No standing grants in force.")
    assert page.evaluate("window.notReloaded") is True
    assert call("c2")["status"] == "pending"
