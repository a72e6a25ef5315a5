"""The web inbox in a real browser (headless Debian Chromium, driven by Playwright): live cards,
deciding with the mouse and the keyboard, and what each person sees. Every scenario checks the
store afterwards, not only the page."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from signoff.server.serve import login_link
from signoff.store import Store

from ..live import LiveServer
from .conftest import CHROMIUM

if not os.path.exists(CHROMIUM):
    pytest.skip(f"browser tests need Debian's Chromium at {CHROMIUM}", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="browser tests need playwright (pip install playwright)"
)
Browser = sync_api.Browser
Page = sync_api.Page
expect = sync_api.expect

LIVE_TIMEOUT_MS = 10_000
FOCUS_WATCH = """(decided) => {
  // each card that gets the focus, and whether the decided card was still in the waiting list then
  window.focusWatch = [];
  document.addEventListener("focusin", (event) => {
    const card = event.target.closest(".card");
    const listed = document.querySelector("#pending #card-" + decided) !== null;
    if (card) window.focusWatch.push([card.dataset.id, listed]);
  });
}"""
SELECTED = re.compile(r"\bselected\b")
EXPECTED_REFUSAL = re.compile(r"Failed to load resource: the server responded with a status of 4\d\d")
SCHEMA = {
    "type": "object",
    "properties": {
        "to": {"type": "string"},
        "amount": {"type": "integer", "maximum": 100},
    },
    "required": ["to", "amount"],
}


@pytest.fixture
def server(sqlite_store: Store) -> Iterator[LiveServer]:
    with LiveServer(sqlite_store) as live:
        yield live


@pytest.fixture
def bot(server: LiveServer) -> Iterator[httpx.Client]:
    with server.client(server.user("bot", "agent")) as client:
        yield client


def sign_in_with_link(page: Any, link: str, name: str) -> None:
    """Open a one-time link and press "Sign in as …" (opening it alone signs nobody in)."""
    page.goto(link)
    page.get_by_role("button", name=f"Sign in as {name}").click()
    page.wait_for_url(re.compile(r"/$"))


class Person:
    """One person in their own browser context (own cookies), with the page's console errors."""

    def __init__(self, browser: Any, server: LiveServer, name: str) -> None:
        server.user(name)
        self.server = server
        self.context = browser.new_context(viewport={"width": 1200, "height": 900})
        self.context.set_default_timeout(LIVE_TIMEOUT_MS)
        self.page: Any = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        sign_in_with_link(self.page, login_link(server.store, server.settings, name), name)
        expect(self.page.locator("#live-state")).to_have_attribute("data-state", "live")

    def _console(self, message: Any) -> None:
        # a refused decision is a 4xx response with the card to show: expected, not an error
        if message.type == "error" and not EXPECTED_REFUSAL.match(message.text):
            self.errors.append(message.text)

    def card(self, request_id: str) -> Any:
        return self.page.locator(f"#card-{request_id}")

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def sign_in(browser: Any, server: LiveServer) -> Iterator[Callable[[str], Person]]:
    """Sign a person in, in a fresh browser context; their pages must log no errors."""
    people: list[Person] = []

    def signed_in(name: str) -> Person:
        person = Person(browser, server, name)
        people.append(person)
        return person

    yield signed_in
    for person in people:
        person.close()
    for person in people:
        assert person.errors == [], f"the page logged errors: {person.errors}"


def ask(bot: httpx.Client, call_id: str, /, **fields: Any) -> str:
    body = {
        "thread_id": "t1",
        "tool_call_id": call_id,
        "tool": "send_email",
        "args": {"to": "bob@example.com"},
    }
    body.update(fields)
    response = bot.post("/v1/requests", json=body)
    assert response.status_code == 201, response.text
    request_id: str = response.json()["id"]
    return request_id


def test_signing_in_with_the_one_time_link(browser: Any, server: LiveServer) -> None:
    server.user("alice")
    link = login_link(server.store, server.settings, "alice")
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(link)
        expect(page.locator("h1")).to_have_text("Sign in as alice")
        assert context.cookies() == [], "opening the link alone signs nobody in"
        page.reload()  # a second look (a preview, a scanner) does not spend it either
        page.get_by_role("button", name="Sign in as alice").click()
        page.wait_for_url(server.url + "/")
        expect(page.locator(".who .user")).to_have_text("alice")
        (cookie,) = context.cookies()
        assert cookie["httpOnly"] and cookie["sameSite"] == "Lax"
        assert page.evaluate("document.cookie") == "", "scripts cannot read the session"
    finally:
        context.close()
    again = browser.new_context()
    try:
        page = again.new_page()
        page.goto(link)
        expect(page.locator(".card-error")).to_contain_text("already been used")
        assert again.cookies() == []
    finally:
        again.close()


def test_a_new_request_appears_live_and_is_approved(
    server: LiveServer, bot: httpx.Client, sign_in: Callable[[str], Person]
) -> None:
    alice = sign_in("alice")
    expect(alice.page.locator("#inbox-empty")).to_be_visible()
    request_id = ask(bot, "c1", args={"to": "bob@example.com", "subject": "Invoice"})
    card = alice.card(request_id)
    expect(card).to_be_visible()
    expect(card.locator(".arglist")).to_contain_text("Invoice")
    expect(alice.page.locator("#inbox-empty")).to_be_hidden()
    card.get_by_role("button", name="Approve", exact=True).click()
    expect(card.locator(".outcome")).to_contain_text("Approved by alice")
    expect(alice.page.locator(f"#recent #card-{request_id}")).to_be_visible()
    request = server.store.get_request(request_id)
    assert request.status == "approved"
    assert request.decision is not None
    assert (request.decision.actor, request.decision.channel) == ("alice", "web")


def test_a_drafting_card_becomes_decidable_when_its_args_are_complete(
    server: LiveServer, bot: httpx.Client, sign_in: Callable[[str], Person]
) -> None:
    alice = sign_in("alice")
    request_id = ask(bot, "c1", drafting=True, args={"to": "bob@"})
    card = alice.card(request_id)
    expect(card.locator(".badge-drafting")).to_be_visible()
    expect(card.get_by_role("button", name="Approve", exact=True)).to_be_disabled()
    response = bot.patch(
        f"/v1/requests/{request_id}", json={"args": {"to": "bob@example.com"}, "ready": True}
    )
    assert response.status_code == 200, response.text
    expect(card.locator(".badge-drafting")).to_have_count(0)
    expect(card.locator(".arglist")).to_contain_text("bob@example.com")
    card.get_by_role("button", name="Approve", exact=True).click()
    expect(card.locator(".outcome")).to_contain_text("Approved by alice")
    assert server.store.get_request(request_id).final_args == {"to": "bob@example.com"}


def test_an_edit_with_a_schema_error_stays_pending_then_a_valid_edit_runs(
    server: LiveServer, bot: httpx.Client, sign_in: Callable[[str], Person]
) -> None:
    alice = sign_in("alice")
    request_id = ask(bot, "c1", args={"to": "bob@example.com", "amount": 5}, args_schema=SCHEMA)
    card = alice.card(request_id)
    card.get_by_role("button", name="Edit").click()
    amount = card.locator('input[name="arg.amount"]')
    amount.fill("500")
    card.get_by_role("button", name="Approve with changes").click()
    expect(card.locator(".card-error")).to_contain_text("500 is greater than the maximum of 100")
    assert server.store.get_request(request_id).status == "pending"
    expect(amount).to_have_value("500")
    amount.fill("50")
    card.locator('input[name="arg.to"]').fill("carol@example.com")
    card.get_by_role("button", name="Approve with changes").click()
    expect(card.locator(".outcome")).to_contain_text("Approved with changes by alice")
    request = server.store.get_request(request_id)
    assert request.status == "edited"
    assert request.final_args == {"to": "carol@example.com", "amount": 50}


def test_reject_with_a_reason(
    server: LiveServer, bot: httpx.Client, sign_in: Callable[[str], Person]
) -> None:
    alice = sign_in("alice")
    request_id = ask(bot, "c1")
    card = alice.card(request_id)
    card.get_by_role("button", name="Reject").first.click()
    card.locator('[data-panel="reject"] textarea[name="message"]').fill("Wrong recipient")
    card.locator('[data-panel="reject"]').get_by_role("button", name="Reject").click()
    expect(card.locator(".outcome")).to_contain_text("Rejected by alice")
    expect(card.locator(".said")).to_have_text("Wrong recipient")
    request = server.store.get_request(request_id)
    assert request.status == "rejected"
    assert request.to_dict()["decision"]["message"] == "Wrong recipient"


def test_respond_to_a_question_and_in_a_tools_place(
    server: LiveServer, bot: httpx.Client, sign_in: Callable[[str], Person]
) -> None:
    alice = sign_in("alice")
    question = ask(
        bot,
        "q1",
        tool="ask_user",
        kind="input",
        args={},
        description="Where should I deploy?",
        answer_schema={
            "type": "object",
            "properties": {"env": {"enum": ["prod", "staging"]}, "note": {"type": "string"}},
            "required": ["env"],
        },
    )
    card = alice.card(question)
    card.get_by_role("button", name="Answer").click()
    card.locator('select[name="answer.env"]').select_option(label="staging")
    card.locator('input[name="answer.note"]').fill("after 5pm")
    card.get_by_role("button", name="Send answer").click()
    expect(card.locator(".outcome")).to_contain_text("Answered by alice")
    request = server.store.get_request(question)
    assert request.status == "responded"
    assert request.to_dict()["decision"]["value"] == {"env": "staging", "note": "after 5pm"}

    call = ask(bot, "c2", tool="lookup_weather", args={"city": "Oslo"})
    card = alice.card(call)
    card.get_by_role("button", name="Respond").click()
    card.locator('[data-panel="respond"] textarea[name="message"]').fill("It is sunny.")
    card.get_by_role("button", name="Send response").click()
    expect(card.locator(".outcome")).to_contain_text("Answered by alice")
    assert server.store.get_request(call).to_dict()["decision"]["message"] == "It is sunny."


def test_a_refreshed_page_keeps_a_pending_card_decidable(
    server: LiveServer, bot: httpx.Client, sign_in: Callable[[str], Person]
) -> None:
    alice = sign_in("alice")
    request_id = ask(bot, "c1")
    expect(alice.card(request_id)).to_be_visible()
    alice.page.reload()
    expect(alice.page.locator("#live-state")).to_have_attribute("data-state", "live")
    approve = alice.card(request_id).get_by_role("button", name="Approve", exact=True)
    expect(approve).to_be_enabled()
    approve.click()
    expect(alice.card(request_id).locator(".outcome")).to_contain_text("Approved by alice")
    assert server.store.get_request(request_id).status == "approved"


def test_a_second_person_does_not_see_the_first_persons_card(
    server: LiveServer, bot: httpx.Client, sign_in: Callable[[str], Person]
) -> None:
    alice, bob = sign_in("alice"), sign_in("bob")
    private = ask(bot, "c1", approvers=["alice"])
    shared = ask(bot, "c2")  # names no approvers: everybody's
    expect(alice.card(private)).to_be_visible()
    expect(bob.card(shared)).to_be_visible()  # bob has seen every event up to the shared card
    expect(bob.card(private)).to_have_count(0)
    bob.page.reload()
    expect(bob.card(shared)).to_be_visible()
    expect(bob.card(private)).to_have_count(0)
    bob.page.goto(f"{server.url}/requests/{private}")
    expect(bob.page.locator("h1")).to_have_text("Not yours to see")
    assert server.store.get_request(private).status == "pending"


def test_opening_a_handle_link_decides_nothing(
    browser: Any, server: LiveServer, bot: httpx.Client, sign_in: Callable[[str], Person]
) -> None:
    alice = sign_in("alice")
    request_id = ask(bot, "c1", approvers=["alice"])
    card = alice.card(request_id)
    card.get_by_role("button", name="Link").click()
    link = card.locator(".handle-link input").input_value()
    assert "/h/so_hdl_" in link
    phone = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        page = phone.new_page()
        page.goto(link)
        expect(page.get_by_role("button", name="Approve", exact=True)).to_be_visible()
        expect(page.locator("body")).to_contain_text("Nothing happens until you press a button")
        page.reload()
        assert server.store.get_request(request_id).status == "pending"
        page.get_by_role("button", name="Approve", exact=True).click()
        expect(page.locator(".outcome")).to_contain_text("Approved by alice")
    finally:
        phone.close()
    request = server.store.get_request(request_id)
    assert request.status == "approved"
    assert request.decision is not None
    assert request.decision.channel == "link"
    expect(card.locator(".outcome")).to_contain_text("Approved by alice")


def test_keyboard_shortcuts(server: LiveServer, bot: httpx.Client, sign_in: Callable[[str], Person]) -> None:
    """j/k move, a approves, r opens Respond, x opens Reject; after each decision the focus is on
    the next card at once (and a screen reader is told what became of the one decided)."""
    alice = sign_in("alice")
    oldest = ask(bot, "c0")
    older = ask(bot, "c1")
    newer = ask(bot, "c2")
    for request_id in (oldest, older, newer):
        expect(alice.card(request_id)).to_be_visible()
    keyboard = alice.page.keyboard

    keyboard.press("?")
    expect(alice.page.locator("#help")).to_be_visible()
    expect(alice.page.locator("#help")).to_contain_text("respond in the tool's place")
    keyboard.press("Escape")
    expect(alice.page.locator("#help")).to_be_hidden()

    keyboard.press("j")
    expect(alice.card(newer)).to_have_class(SELECTED)
    keyboard.press("j")
    expect(alice.card(older)).to_have_class(SELECTED)
    keyboard.press("k")
    expect(alice.card(newer)).to_have_class(SELECTED)
    alice.page.evaluate(FOCUS_WATCH, newer)
    keyboard.press("a")
    expect(alice.card(newer).locator(".outcome")).to_contain_text("Approved by alice")
    expect(alice.card(older)).to_be_focused()
    # at once: while the decided card is still in the list (it leaves for "Just decided" later)
    assert [older, True] in alice.page.evaluate("window.focusWatch")
    expect(alice.card(older)).to_have_class(SELECTED)
    # the decision's own answer ("Approved.") or the live update that may have replaced it first
    expect(alice.page.locator("#announce")).to_have_text(re.compile(r"^send_email: Approved"))
    assert server.store.get_request(newer).status == "approved"
    assert server.store.get_request(older).status == "pending"
    expect(alice.page.locator(f"#recent #card-{newer}")).to_be_visible()
    expect(alice.card(older)).to_have_class(SELECTED)

    keyboard.press("r")
    answer = alice.card(older).locator('[data-panel="respond"] textarea')
    expect(answer).to_be_focused()
    keyboard.press("Escape")
    expect(answer).to_be_hidden()
    expect(alice.card(older)).to_be_focused()
    keyboard.press("r")
    expect(answer).to_be_focused()
    keyboard.type("Sent it by hand")
    keyboard.press("Control+Enter")
    expect(alice.card(older).locator(".outcome")).to_contain_text("Answered by alice")
    expect(alice.card(oldest)).to_be_focused()
    assert server.store.get_request(older).to_dict()["decision"]["message"] == "Sent it by hand"

    keyboard.press("x")
    reason = alice.card(oldest).locator('[data-panel="reject"] textarea')
    expect(reason).to_be_focused()
    keyboard.type("Not today")
    keyboard.press("Control+Enter")
    expect(alice.card(oldest).locator(".outcome")).to_contain_text("Rejected by alice")
    assert server.store.get_request(oldest).to_dict()["decision"]["message"] == "Not today"


def test_a_keyboard_approve_of_a_destructive_call_asks_once_more(
    server: LiveServer, bot: httpx.Client, sign_in: Callable[[str], Person]
) -> None:
    """A rule's `confirm: true` (here the server's) or the tool's `destructiveHint` marks the
    card; `a` (or Enter on its Approve button) opens a dialog whose focus starts on Cancel; Esc
    goes back to the card with nothing decided; the dialog's Approve decides. A pointer's click
    on Approve decides at once, as on any card."""
    server.store.set_layer("tool", "drop_table", {"requires_approval": True, "confirm": True}, actor="test")
    alice = sign_in("alice")
    plain = ask(bot, "c0")
    hinted = ask(
        bot, "c1", tool="delete_file", args={"path": "/srv/x"}, tool_annotations={"destructiveHint": True}
    )
    ruled = ask(bot, "c2", tool="drop_table", args={"table": "customers"})
    for request_id in (plain, hinted, ruled):
        expect(alice.card(request_id)).to_be_visible()
    page, keyboard = alice.page, alice.page.keyboard
    expect(alice.card(ruled).locator(".badge-destructive")).to_have_text("destructive")
    # no description of its own: the card says what the call does, from its args
    expect(alice.card(ruled).locator(".description")).to_have_text("drop_table table 'customers'")
    expect(alice.card(hinted).locator(".description")).to_have_text("delete_file path /srv/x")
    expect(alice.card(plain).locator(".badge-destructive")).to_have_count(0)
    dialog = page.get_by_role("dialog", name="Approve drop_table?")

    keyboard.press("j")
    keyboard.press("a")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("marked destructive")
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    keyboard.press("a")  # the shortcuts sleep while the dialog is open
    keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(alice.card(ruled)).to_be_focused()
    assert server.store.get_request(ruled).status == "pending"

    keyboard.press("a")
    expect(dialog).to_be_visible()
    keyboard.press("Shift+Tab")
    expect(dialog.get_by_role("button", name="Approve")).to_be_focused()
    keyboard.press("Enter")
    expect(alice.card(ruled).locator(".outcome")).to_contain_text("Approved by alice")
    assert server.store.get_request(ruled).status == "approved"
    expect(alice.card(hinted)).to_be_focused()

    approve = alice.card(hinted).get_by_role("button", name="Approve", exact=True)
    approve.focus()
    keyboard.press("Enter")  # a keyboard approve, on the button itself
    expect(page.get_by_role("dialog", name="Approve delete_file?")).to_be_visible()
    keyboard.press("Escape")
    assert server.store.get_request(hinted).status == "pending"
    approve.click()  # the mouse: decided at once
    expect(alice.card(hinted).locator(".outcome")).to_contain_text("Approved by alice")
    assert server.store.get_request(hinted).status == "approved"
    assert server.store.get_request(plain).status == "pending"


def test_a_blank_required_field_is_shown_next_to_it_before_anything_is_sent(
    server: LiveServer, bot: httpx.Client, sign_in: Callable[[str], Person]
) -> None:
    alice = sign_in("alice")
    request_id = ask(bot, "c1", args={"to": "bob@example.com", "amount": 5}, args_schema=SCHEMA)
    card = alice.card(request_id)
    card.get_by_role("button", name="Edit").click()
    to = card.locator('input[name="arg.to"]')
    to.fill("   ")
    sent: list[str] = []
    alice.page.on("request", lambda request: sent.append(request.url) if request.method == "POST" else None)
    card.get_by_role("button", name="Approve with changes").click()
    error = card.locator(".field-invalid .field-error")
    expect(error).to_have_text("To is required")
    expect(to).to_have_attribute("aria-invalid", "true")
    expect(to).to_be_focused()
    assert sent == [], "nothing is sent while a required field is blank"
    assert server.store.get_request(request_id).status == "pending"
    to.fill("carol@example.com")
    expect(card.locator(".field-invalid")).to_have_count(0)
    card.get_by_role("button", name="Approve with changes").click()
    expect(card.locator(".outcome")).to_contain_text("Approved with changes by alice")
    expect(card.locator(".changes")).to_contain_text("carol@example.com")
    assert server.store.get_request(request_id).final_args == {"to": "carol@example.com", "amount": 5}
