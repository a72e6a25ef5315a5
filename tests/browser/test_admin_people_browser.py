"""Admin → People and Admin → Agents in a real browser (headless Chromium, desktop and phone): an
admin adds a person, disables and re-enables them, puts them in a group; makes an agent and its
token, reads the secret once (never again), and the agent USES it over HTTP (a `Client` and a
`Gate` creating a request, which the agent's page then lists); the admin revokes the token in
the page, and the agent's next call gets 401. Every form is reached by its label; some are sent with the
keyboard's Enter."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import pytest

from signoff import Gate, Pending, RuleSet, Scope, ToolCall
from signoff.client import Client
from signoff.errors import NotAuthenticated
from signoff.server.serve import login_link
from signoff.store import SQLiteStore

from ..live import LiveServer
from .conftest import CHROMIUM

if not os.path.exists(CHROMIUM):
    pytest.skip(f"browser tests need Debian's Chromium at {CHROMIUM}", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="browser tests need playwright (pip install playwright)"
)
expect = sync_api.expect

SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
RULES = RuleSet.from_dict({"tools": {"deploy": {"requires_approval": True}}})


@pytest.fixture
def server(sqlite_store: SQLiteStore) -> Iterator[LiveServer]:
    with LiveServer(sqlite_store) as live:
        yield live


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


def fits(page: Any) -> None:
    """Nothing wider than the window (a phone scrolls down, never sideways)."""
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"the page is {width}px wide"


def test_an_admin_adds_disables_enables_and_groups_a_person(page: Any, server: LiveServer) -> None:
    store = server.store
    page.goto(server.url + "/admin")
    page.get_by_role("navigation", name="Administration").get_by_role("link", name="People").click()
    expect(page.get_by_role("heading", name="People and groups")).to_be_visible()
    fits(page)
    page.get_by_role("textbox", name="Name*").fill("erin")
    page.get_by_label("Display name").fill("Erin Example")
    page.get_by_label("Display name").press("Enter")  # the keyboard sends the form
    expect(page.get_by_role("status")).to_contain_text("Added erin")
    user = store.get_user("erin")
    assert user is not None and user.display_name == "Erin Example" and not user.disabled
    fits(page)

    page.get_by_role("button", name="Disable").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_contain_text("Disabled erin")
    assert store.get_user("erin").disabled  # type: ignore[union-attr]
    page.get_by_role("button", name="Enable").click()
    expect(page.get_by_role("status")).to_contain_text("Enabled erin")
    assert not store.get_user("erin").disabled  # type: ignore[union-attr]

    page.get_by_role("textbox", name="Group").fill("ops")
    page.get_by_role("textbox", name="Group").press("Enter")
    expect(page.get_by_role("status")).to_contain_text("erin is in group ops")
    assert store.groups_of("erin") == ["ops"]
    page.get_by_role("textbox", name="Group").fill("ops")
    page.get_by_role("button", name="Add to the group").click()  # twice: refused, nothing changed
    expect(page.get_by_role("alert")).to_contain_text("erin is already in group ops")

    page.get_by_role("navigation", name="Administration").get_by_role("link", name="People").click()
    row = page.locator("tr[data-person=erin]")
    expect(row).to_contain_text("ops")
    expect(row).to_contain_text("enabled")
    expect(page.locator("tr[data-group=ops]")).to_contain_text("erin")
    fits(page)
    actions = [entry.action for entry in store.audit_entries(actor="root") if entry.action != "login.used"]
    assert actions == ["user.added", "user.updated", "user.updated", "group.member_added"]


def test_an_agent_token_is_shown_once_used_over_http_and_revoked_in_the_page(
    page: Any, server: LiveServer
) -> None:
    store = server.store
    page.goto(server.url + "/admin/agents")
    expect(page.get_by_role("heading", name="Agents and tokens")).to_be_visible()
    page.get_by_role("textbox", name="Name*").fill("deployer")
    page.get_by_label("Token label").fill("ci")
    page.get_by_label("Expires in").fill("2d")
    page.get_by_role("button", name="Make the agent and its token").click()
    expect(page.get_by_role("heading", name="Its API token")).to_be_visible()
    secret = page.locator("#agent-secret").input_value()
    assert secret.startswith("so_tok_")
    page.get_by_role("button", name="Copy").click()
    expect(page.get_by_role("button", name=re.compile("Copied|Select and copy"))).to_be_visible()
    fits(page)
    [token] = store.list_credentials("token", "deployer")
    assert token.label == "ci" and token.expires_at is not None
    assert 47 * 3600 < (token.expires_at - token.created_at).total_seconds() <= 48 * 3600

    for again in ("/admin/agents/deployer", "/admin/agents", "/admin/people/deployer"):
        page.goto(server.url + again)  # the secret is never shown again
        expect(page.get_by_role("heading", level=1)).to_be_visible()
        assert secret not in page.content()
    expect(page.locator(f"tr[data-token={token.id}]")).to_contain_text("never")  # not used yet

    with Client(server.url, secret) as agent:  # the agent uses it over HTTP
        asked = Gate(agent, rules=RULES).submit(
            ToolCall(name="deploy", args={"env": "prod"}, id="c1"), Scope(thread_id="t1")
        )
        assert isinstance(asked, Pending)
        assert agent.me().name == "deployer"

    page.goto(server.url + "/admin/agents/deployer")
    asked_row = page.locator(f"tr[data-request={asked.request.id}]")
    expect(asked_row).to_contain_text("deploy")
    expect(asked_row).to_contain_text("pending")
    expect(page.locator(f"tr[data-token={token.id}]")).not_to_contain_text("never")  # its last use
    fits(page)

    page.get_by_role("button", name=f"Revoke the token {token.id}").click()
    expect(page.get_by_role("status")).to_contain_text(f"Revoked the token {token.id}")
    expect(page.locator(f"tr[data-token={token.id}]")).to_contain_text("revoked")
    with Client(server.url, secret, retry_for=0) as agent, pytest.raises(NotAuthenticated) as refused:
        agent.me()
    assert refused.value.status_code == 401
    revoked = list(store.audit_entries(action="credential.revoked"))
    assert len(revoked) == 1 and revoked[0].data["before"]["revoked"] is False
    assert revoked[0].data["after"]["revoked"] is True
