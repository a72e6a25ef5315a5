"""Four eyes in the inbox, in a real browser at desktop and phone sizes: the requester's card
says they may not approve and offers only Reject; another approver's card says who is kept out
and approves it. The store is checked afterwards."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from signoff.server.serve import login_link
from signoff.store import Store

from ..live import LiveServer
from .conftest import CHROMIUM
from .test_inbox_browser import LIVE_TIMEOUT_MS, ask, sign_in_with_link

if not os.path.exists(CHROMIUM):
    pytest.skip(f"browser tests need Debian's Chromium at {CHROMIUM}", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="browser tests need playwright (pip install playwright)"
)
expect = sync_api.expect

RULE = {"requires_approval": True, "approvers": ["requester", "erin"], "separation": "requester"}


@pytest.fixture
def server(sqlite_store: Store) -> Iterator[LiveServer]:
    sqlite_store.set_layer("tool", "send_email", RULE, actor="test")
    with LiveServer(sqlite_store) as live:
        yield live


@pytest.fixture
def bot(server: LiveServer) -> Iterator[httpx.Client]:
    with server.client(server.user("bot", "agent")) as client:
        yield client


def signed_in(
    browser: Any, server: LiveServer, name: str, size: tuple[int, int], errors: list[str]
) -> tuple[Any, Any]:
    server.user(name)
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    context.set_default_timeout(LIVE_TIMEOUT_MS)
    page = context.new_page()
    page.on("pageerror", lambda error: errors.append(str(error)))
    sign_in_with_link(page, login_link(server.store, server.settings, name), name)
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    return context, page


@pytest.mark.parametrize("size", [(1200, 900), (390, 844)], ids=["desktop", "phone"])
def test_the_requester_may_only_reject_and_another_approver_approves(
    browser: Any, server: LiveServer, bot: httpx.Client, size: tuple[int, int]
) -> None:
    errors: list[str] = []
    carol_context, carol = signed_in(browser, server, "carol", size, errors)
    erin_context, erin = signed_in(browser, server, "erin", size, errors)
    try:
        request_id = ask(bot, "c1", requester="carol")
        mine = carol.locator(f"#card-{request_id}")
        expect(mine.locator(".badge-four-eyes")).to_be_visible()
        expect(mine.locator(".four-eyes")).to_contain_text("you may not approve this request")
        expect(mine.get_by_role("button", name="Reject")).to_be_visible()
        expect(mine.get_by_role("button", name="Approve", exact=True)).to_have_count(0)
        expect(mine.get_by_role("button", name="Edit")).to_have_count(0)
        box = mine.locator(".four-eyes").bounding_box()
        assert box is not None and box["x"] + box["width"] <= size[0]  # no sideways scrolling on a phone

        theirs = erin.locator(f"#card-{request_id}")
        expect(theirs.locator(".four-eyes")).to_contain_text(
            "Four eyes: the requester may not approve (carol); they may still reject."
        )
        theirs.get_by_role("button", name="Approve", exact=True).click()
        expect(theirs.locator(".outcome")).to_contain_text("Approved by erin")
        expect(mine.locator(".outcome")).to_contain_text("Approved by erin")
        assert server.store.get_request(request_id).status == "approved"

        carol.goto(f"{server.url}/requests/{request_id}")
        expect(carol.locator("dd.four-eyes")).to_contain_text(
            "four eyes: the requester may not approve (carol)"
        )
    finally:
        carol_context.close()
        erin_context.close()
    assert errors == [], f"the pages raised errors: {errors}"
