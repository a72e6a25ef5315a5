"""Deciding inbox cards together in a real browser (headless Debian Chromium, Playwright), at
desktop and phone sizes: ticking with the mouse (shift-click ranges) and the keyboard (`s`,
Shift+S), one reason for all, a card whose rule says `batch: false`, and the bar without
JavaScript. Every scenario checks the store afterwards, not only the page."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import pytest

from signoff import RuleSet
from signoff.requests import RequestStatus
from signoff.server.serve import login_link
from signoff.store import Store

from ..live import LiveServer
from .conftest import CHROMIUM

if not os.path.exists(CHROMIUM):
    pytest.skip(f"browser tests need Debian's Chromium at {CHROMIUM}", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="browser tests need playwright (pip install playwright)"
)
expect = sync_api.expect

LIVE_TIMEOUT_MS = 10_000
SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
RULES = RuleSet.from_yaml(
    """
tools:
  send_email: {requires_approval: true, approvers: [alice]}
  wipe: {requires_approval: true, approvers: [alice], batch: false}
  drop_table: {requires_approval: true, approvers: [alice], confirm: true}
"""
)

RERENDER = """async (id) => {
  const response = await fetch("/inbox/cards/" + id, { headers: { "HX-Request": "true" } });
  const template = document.createElement("template");
  template.innerHTML = (await response.text()).trim();
  document.getElementById("card-" + id).replaceWith(template.content.querySelector(".card"));
}"""


@pytest.fixture
def server(sqlite_store: Store) -> Iterator[LiveServer]:
    sqlite_store.replace_rules(RULES, actor="test")
    with LiveServer(sqlite_store) as live:
        yield live


@pytest.fixture
def asked(server: LiveServer) -> dict[str, str]:
    """Three emails and a wipe, asked in that order (the inbox shows the newest first)."""
    found = {}
    with server.client(server.user("bot", "agent")) as bot:
        for call_id, tool in (
            ("e0", "send_email"),
            ("e1", "send_email"),
            ("e2", "send_email"),
            ("w", "wipe"),
        ):
            body = {"thread_id": "t1", "tool_call_id": call_id, "tool": tool, "args": {"n": call_id}}
            created = bot.post("/v1/requests", json=body)
            assert created.status_code == 201, created.text
            found[call_id] = created.json()["id"]
    return found


@pytest.fixture(params=sorted(SIZES))
def page(
    request: pytest.FixtureRequest, browser: Any, server: LiveServer, asked: dict[str, str]
) -> Iterator[Any]:
    """Alice's inbox, opened once the requests are there (the keyboard goes by their order)."""
    server.user("alice")
    context = browser.new_context(viewport=SIZES[request.param])
    context.set_default_timeout(LIVE_TIMEOUT_MS)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    _sign_in(opened, login_link(server.store, server.settings, "alice"))
    expect(opened.locator("#live-state")).to_have_attribute("data-state", "live")
    yield opened
    context.close()
    assert errors == [], f"the page logged errors: {errors}"


def _sign_in(page: Any, link: str) -> None:
    page.goto(link)
    page.get_by_role("button", name="Sign in as alice").click()
    page.wait_for_url(re.compile(r"/$"))


def tick(page: Any, request_id: str, **click: Any) -> None:
    page.locator(f"#card-{request_id} .batch-pick").click(**click)


def statuses(store: Store, asked: dict[str, str], *names: str) -> list[RequestStatus]:
    return [store.get_request(asked[name]).status for name in names]


def assert_fits(page: Any) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"the page is {width}px wide"


def test_shift_click_ticks_a_range_and_one_reason_rejects_them_all(
    page: Any, server: LiveServer, asked: dict[str, str]
) -> None:
    bar = page.locator("#batch")
    expect(bar).to_be_hidden()
    wipe = page.locator(f"#card-{asked['w']}")
    expect(wipe.locator(".batch-pick")).to_have_count(0)
    expect(wipe.locator(".badge-alone")).to_have_text("decided alone")

    tick(page, asked["e2"])
    tick(page, asked["e0"], modifiers=["Shift"])

    expect(bar).to_be_visible()
    expect(page.locator("#batch-count")).to_have_text("3 requests selected")
    assert_fits(page)
    bar.get_by_label(re.compile("One reason for all")).fill("wrong recipients")
    bar.get_by_role("button", name="Reject 3").click()

    expect(page.locator("#batch-result")).to_contain_text("3 rejected")
    for name in ("e0", "e1", "e2"):
        expect(page.locator(f"#pending #card-{asked[name]}")).to_have_count(0)
    store = server.store
    assert statuses(store, asked, "e0", "e1", "e2", "w") == [RequestStatus.REJECTED] * 3 + [
        RequestStatus.PENDING
    ]
    decision = store.get_request(asked["e1"]).decision
    assert decision is not None and decision.to_dict()["message"] == "wrong recipients"
    (entry,) = store.audit_entries(action="batch.decided")
    assert entry.actor == "alice" and entry.channel == "web"
    expect(bar).to_be_hidden()


def test_the_keyboard_ticks_with_s_and_a_range_with_shift_s(
    page: Any, server: LiveServer, asked: dict[str, str]
) -> None:
    page.locator("main").focus()
    page.keyboard.press("j")  # the wipe (newest), which a batch may not take: s does nothing
    page.keyboard.press("s")
    expect(page.locator("#batch")).to_be_hidden()
    page.keyboard.press("j")
    page.keyboard.press("s")
    expect(page.locator("#batch-count")).to_have_text("1 request selected")
    page.keyboard.press("s")  # toggles it off again
    expect(page.locator("#batch")).to_be_hidden()
    page.keyboard.press("s")
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("Shift+S")
    expect(page.locator("#batch-count")).to_have_text("3 requests selected")
    page.get_by_role("button", name="Approve 3").click()

    expect(page.locator("#batch-result")).to_contain_text("3 approved")
    assert statuses(server.store, asked, "e0", "e1", "e2", "w") == [RequestStatus.APPROVED] * 3 + [
        RequestStatus.PENDING
    ]


def test_ticks_survive_live_updates_and_what_is_decided_elsewhere_leaves_the_selection(
    page: Any, server: LiveServer, asked: dict[str, str]
) -> None:
    tick(page, asked["e0"])
    tick(page, asked["e1"])
    expect(page.locator("#batch-count")).to_have_text("2 requests selected")
    with server.client(server.user("alice")) as alice:
        assert alice.post(f"/v1/requests/{asked['e1']}/decision", json={"type": "approve"}).status_code == 200
    expect(page.locator("#batch-count")).to_have_text("1 request selected")
    page.evaluate(RERENDER, asked["e0"])  # as a live update of the card does (inbox.js `place`)
    expect(page.locator(f"#card-{asked['e0']} .batch-pick")).to_be_checked()
    page.get_by_role("button", name="Approve 1").click()
    expect(page.locator("#batch-result")).to_contain_text("1 approved")
    assert statuses(server.store, asked, "e0", "e1", "e2") == [
        RequestStatus.APPROVED,
        RequestStatus.APPROVED,
        RequestStatus.PENDING,
    ]


def test_approving_a_destructive_call_in_a_batch_from_the_keyboard_asks_once_more(
    page: Any, server: LiveServer, asked: dict[str, str]
) -> None:
    with server.client(server.user("bot", "agent")) as bot:
        body = {"thread_id": "t1", "tool_call_id": "d", "tool": "drop_table", "args": {"table": "users"}}
        drop = bot.post("/v1/requests", json=body).json()["id"]
    tick(page, drop)
    tick(page, asked["e0"])
    approve = page.get_by_role("button", name="Approve 2")
    approve.focus()
    page.keyboard.press("Enter")
    dialog = page.locator("#confirm-batch")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("1 of them is marked destructive")
    page.keyboard.press("Enter")  # the focus starts on Cancel
    expect(dialog).to_be_hidden()
    assert server.store.get_request(drop).status is RequestStatus.PENDING
    approve.focus()
    page.keyboard.press("Enter")
    dialog.get_by_role("button", name="Approve").click()
    expect(page.locator("#batch-result")).to_contain_text("2 approved")
    assert server.store.get_request(drop).status is RequestStatus.APPROVED
    assert server.store.get_request(asked["e0"]).status is RequestStatus.APPROVED


def test_the_bar_works_without_javascript(browser: Any, server: LiveServer, asked: dict[str, str]) -> None:
    server.user("alice")
    context = browser.new_context(viewport=SIZES["phone"], java_script_enabled=False)
    context.set_default_timeout(LIVE_TIMEOUT_MS)
    try:
        page = context.new_page()
        _sign_in(page, login_link(server.store, server.settings, "alice"))
        page.goto(server.url + "/")
        expect(page.locator("#batch")).to_be_visible()
        tick(page, asked["e0"])
        tick(page, asked["e2"])
        page.get_by_role("button", name="Approve selected").click()
        expect(page.locator("h1")).to_have_text("Decided together")
        expect(page.locator("main")).to_contain_text("2 approved")
        assert_fits(page)
    finally:
        context.close()
    assert statuses(server.store, asked, "e0", "e1", "e2") == [
        RequestStatus.APPROVED,
        RequestStatus.PENDING,
        RequestStatus.APPROVED,
    ]


def test_someone_who_may_not_decide_gets_the_reason_not_a_decision(
    browser: Any, server: LiveServer, asked: dict[str, str]
) -> None:
    """A tampered form (an id of someone else's request) is skipped with the reason."""
    server.user("alice")
    context = browser.new_context(viewport=SIZES["desktop"], java_script_enabled=False)
    try:
        page = context.new_page()
        _sign_in(page, login_link(server.store, server.settings, "alice"))
        with server.client(server.user("bot", "agent")) as bot:
            mine = bot.post(
                "/v1/requests",
                json={
                    "thread_id": "t2",
                    "tool_call_id": "x",
                    "tool": "lookup",
                    "args": {},
                    "approvers": ["bob"],
                },
            ).json()["id"]
        page.goto(server.url + "/")
        page.evaluate(
            """(id) => { const box = document.querySelector('.batch-pick');
                         box.value = id; box.checked = true; }""",
            mine,
        )
        page.get_by_role("button", name="Approve selected").click()
        expect(page.locator("main")).to_contain_text("0 approved, 1 skipped")
        expect(page.locator(".batch-skipped")).to_contain_text("not an approver")
    finally:
        context.close()
    assert server.store.get_request(mine).status is RequestStatus.PENDING
