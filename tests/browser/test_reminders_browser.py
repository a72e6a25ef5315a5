"""The request page says what reminders and escalations did, on a phone and a laptop: an
escalated approver opens it and reads "reminded 1×, escalated to group:oncall at …" in full."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest

from signoff._util import utcnow
from signoff.requests import NewRequest, Request
from signoff.rules.effective import RequestRule
from signoff.rules.schedule_model import Escalation
from signoff.server import ServerSettings
from signoff.server.serve import login_link
from signoff.store import Store
from tests.browser.test_inbox_browser import sign_in_with_link
from tests.live import LiveServer

SIZES = {"phone": (390, 844), "laptop": (1280, 800)}


def escalating_request(store: Store, remind: tuple[str, ...] = ()) -> Request:
    """alice's to decide, escalated to group:oncall (dave) after 4 hours."""
    for name in ("alice", "dave"):
        store.add_user(name, role="member", actor="test")
    store.add_group_member("oncall", "dave", actor="test")
    rule = RequestRule(approvers=("alice",), remind=remind, escalate=(Escalation("4h", ("group:oncall",)),))
    new = NewRequest(
        thread_id="t-browser",
        tool_call_id="c1",
        tool_name="send_email",
        args={"to": "bob@example.com"},
        description="Send a mail to bob",
        deadline=utcnow() + timedelta(hours=24),
        rule=rule,
    )
    return store.create_request(new)[0]


@contextmanager
def daves_page(browser: Any, store: Store, width: int, height: int) -> Iterator[Any]:
    """dave signed in to a server over `store`, in a viewport of this size; paths open from its root."""
    with LiveServer(store, ServerSettings(sweep_interval=60)) as server:
        context = browser.new_context(viewport={"width": width, "height": height}, base_url=server.url)
        try:
            page = context.new_page()
            sign_in_with_link(page, login_link(server.store, server.settings, "dave"), "dave")
            yield page
        finally:
            context.close()


@pytest.mark.parametrize("size", sorted(SIZES))
def test_an_escalated_approver_reads_the_steps_on_the_request_page(
    browser: Any, sqlite_store: Store, size: str
) -> None:
    request = escalating_request(sqlite_store, remind=("30m",))
    sqlite_store.run_due_steps(now=request.created_at + timedelta(hours=5))
    width, height = SIZES[size]
    with daves_page(browser, sqlite_store, width, height) as page:
        page.goto(f"/requests/{request.id}")
        said = page.locator("#steps-said")
        text = said.inner_text()
        assert text.startswith("⏰ reminded 1×, escalated to group:oncall at ")
        box = said.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
        assert page.evaluate("document.documentElement.scrollWidth") <= width


@pytest.mark.parametrize("size", sorted(SIZES))
def test_an_escalation_places_the_request_in_the_new_approvers_open_inbox(
    browser: Any, sqlite_store: Store, size: str
) -> None:
    """As a new request does: no reload; the page was open before the escalation ran."""
    request = escalating_request(sqlite_store)
    width, height = SIZES[size]
    with daves_page(browser, sqlite_store, width, height) as page:
        page.wait_for_selector("#live-state[data-state='live']")
        assert page.locator(f"#card-{request.id}").count() == 0  # not dave's to decide yet
        sqlite_store.run_due_steps(now=request.created_at + timedelta(hours=4, minutes=1))
        card = page.locator(f"#card-{request.id}")
        card.wait_for(timeout=10_000)
        assert "send_email" in card.inner_text()
        assert page.evaluate("document.documentElement.scrollWidth") <= width
