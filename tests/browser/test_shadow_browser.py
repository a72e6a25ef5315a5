"""The Rules page's "Tried in shadow" section in a real browser (headless Chromium, at a phone's
and a desktop's size): preview an edit, try it in shadow instead of applying it, see a call it
would answer differently counted and listed, drop it; try another and promote it."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import pytest

from signoff import Gate, Scope, ToolCall
from signoff.server.serve import login_link
from signoff.store import Store

from ..live import LiveServer
from .conftest import CHROMIUM
from .test_layout_browser import NO_SIDEWAYS

if not os.path.exists(CHROMIUM):
    pytest.skip(f"browser tests need Debian's Chromium at {CHROMIUM}", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="browser tests need playwright (pip install playwright)"
)
expect = sync_api.expect

SIZES = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 900}}
ALICE = {"requires_approval": True, "approvers": ["alice"]}


@pytest.fixture
def server(sqlite_store: Store) -> Iterator[LiveServer]:
    sqlite_store.set_layer("tool", "send_email", ALICE, actor="setup")
    sqlite_store.set_layer("tool", "search", {"requires_approval": False}, actor="setup")
    with LiveServer(sqlite_store) as live:
        live.user("root", "admin")
        yield live


@pytest.fixture(params=sorted(SIZES))
def page(request: pytest.FixtureRequest, browser: Any, server: LiveServer) -> Iterator[Any]:
    context = browser.new_context(viewport=SIZES[request.param])
    context.set_default_timeout(10_000)
    page = context.new_page()
    page.on("dialog", lambda dialog: dialog.accept())  # promote's and drop's "are you sure?"
    page.goto(login_link(server.store, server.settings, "root"))
    page.get_by_role("button", name="Sign in as root").click()
    page.wait_for_url(re.compile(r"/$"))
    yield page
    context.close()


def fits(page: Any) -> None:
    found = page.evaluate(NO_SIDEWAYS)
    assert found["page"] <= found["width"] and found["out"] == [], found


def try_in_shadow(page: Any, server: LiveServer, tools: str, label: str) -> None:
    page.goto(server.url + "/admin/rules")
    page.get_by_role("textbox", name="Tools", exact=True).fill(tools)
    page.get_by_role("button", name="Preview").click()
    preview = page.locator("#rules-preview")
    expect(preview.get_by_role("status")).to_contain_text("would change")
    preview.get_by_role("textbox", name="Shadow label").fill(label)
    preview.get_by_role("button", name="Try in shadow").click()


def test_try_in_shadow_see_the_hits_drop_then_promote(page: Any, server: LiveServer) -> None:
    store = server.store
    asks_search = (
        "send_email:\n  requires_approval: true\n  approvers: [alice]\nsearch:\n  requires_approval: true\n"
    )
    try_in_shadow(page, server, asks_search, "ask before searching")
    expect(page.get_by_role("status").filter(has_text="Shadow #1")).to_contain_text("added")
    section = page.locator("#shadow-rules")
    expect(section).to_contain_text("ask before searching")
    expect(section).to_contain_text("0 newly asked")
    assert store.get_layer("tool", "search") == {"requires_approval": False}  # nothing applied
    fits(page)

    gate = Gate(store, scope=Scope(thread_id="t", agent="finder"), rules_refresh=0)
    outcome = gate.submit(ToolCall(name="search", args={"q": "cats"}, id="c1"))
    assert getattr(outcome, "execute", False)  # it ran, as before
    assert gate._gate_rules.recorder.flush(timeout=10)
    page.reload()
    expect(section).to_contain_text("1 newly asked")
    expect(section.locator(".shadow-rules")).to_contain_text("1 newly asked by tool search")
    section.get_by_text("Latest 1 hit").click()
    expect(section.locator(".shadow-hits")).to_contain_text("search by finder")
    expect(section.locator(".shadow-hits")).to_contain_text('"q": "cats"')
    fits(page)

    section.get_by_role("button", name="Drop #1").click()
    expect(page.get_by_role("status").filter(has_text="Shadow #1")).to_contain_text("dropped")
    expect(section).to_contain_text("No rules in shadow")
    assert store.get_shadow_rules(1).status == "dropped"

    try_in_shadow(page, server, asks_search, "second try")
    expect(section).to_contain_text("second try")
    section.get_by_role("button", name="Promote #2").click()
    expect(page.get_by_role("status").filter(has_text="Shadow #2")).to_contain_text("promoted")
    assert store.get_layer("tool", "search") == {"requires_approval": True}
    expect(page.locator("#rule-history")).to_contain_text("rules.promoted")
