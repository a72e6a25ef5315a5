"""The request page says what reminders and escalations did, on a phone and a laptop: an
escalated approver opens it and reads "reminded 1×, escalated to group:oncall at …" in full."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest

from signoff._util import utcnow
from signoff.requests import NewRequest
from signoff.rules.effective import RequestRule
from signoff.rules.schedule_model import Escalation
from signoff.server import ServerSettings
from signoff.server.serve import login_link
from signoff.store import Store
from tests.live import LiveServer

SIZES = {"phone": (390, 844), "laptop": (1280, 800)}


@pytest.mark.parametrize("size", sorted(SIZES))
def test_an_escalated_approver_reads_the_steps_on_the_request_page(
    browser: Any, sqlite_store: Store, size: str
) -> None:
    for name in ("alice", "dave"):
        sqlite_store.add_user(name, role="member", actor="test")
    sqlite_store.add_group_member("oncall", "dave", actor="test")
    rule = RequestRule(approvers=("alice",), remind=("30m",), escalate=(Escalation("4h", ("group:oncall",)),))
    new = NewRequest(
        thread_id="t-browser",
        tool_call_id="c1",
        tool_name="send_email",
        args={"to": "bob@example.com"},
        description="Send a mail to bob",
        deadline=utcnow() + timedelta(hours=24),
        rule=rule,
    )
    request = sqlite_store.create_request(new)[0]
    sqlite_store.run_due_steps(now=request.created_at + timedelta(hours=5))
    width, height = SIZES[size]
    with LiveServer(sqlite_store, ServerSettings(sweep_interval=60)) as server:
        context = browser.new_context(viewport={"width": width, "height": height})
        try:
            page = context.new_page()
            page.goto(login_link(server.store, server.settings, "dave"))
            page.get_by_role("button", name="Sign in as dave").click()
            page.wait_for_url(re.compile(r"/$"))
            page.goto(f"{server.url}/requests/{request.id}")
            said = page.locator("#steps-said")
            text = said.inner_text()
            assert text.startswith("⏰ reminded 1×, escalated to group:oncall at ")
            box = said.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
            assert page.evaluate("document.documentElement.scrollWidth") <= width
        finally:
            context.close()


@pytest.mark.parametrize("size", sorted(SIZES))
def test_an_escalation_places_the_request_in_the_new_approvers_open_inbox(
    browser: Any, sqlite_store: Store, size: str
) -> None:
    """As a new request does: no reload; the page was open before the escalation ran."""
    for name in ("alice", "dave"):
        sqlite_store.add_user(name, role="member", actor="test")
    sqlite_store.add_group_member("oncall", "dave", actor="test")
    rule = RequestRule(approvers=("alice",), escalate=(Escalation("4h", ("group:oncall",)),))
    new = NewRequest(
        thread_id="t-browser",
        tool_call_id="c1",
        tool_name="send_email",
        args={"to": "bob@example.com"},
        description="Send a mail to bob",
        deadline=utcnow() + timedelta(hours=24),
        rule=rule,
    )
    request = sqlite_store.create_request(new)[0]
    width, height = SIZES[size]
    with LiveServer(sqlite_store, ServerSettings(sweep_interval=60)) as server:
        context = browser.new_context(viewport={"width": width, "height": height})
        try:
            page = context.new_page()
            page.goto(login_link(server.store, server.settings, "dave"))
            page.get_by_role("button", name="Sign in as dave").click()
            page.wait_for_url(re.compile(r"/$"))
            page.wait_for_selector("#live-state[data-state='live']")
            assert page.locator(f"#card-{request.id}").count() == 0  # not dave's to decide yet
            sqlite_store.run_due_steps(now=request.created_at + timedelta(hours=4, minutes=1))
            card = page.locator(f"#card-{request.id}")
            card.wait_for(timeout=10_000)
            assert "send_email" in card.inner_text()
            assert page.evaluate("document.documentElement.scrollWidth") <= width
        finally:
            context.close()
