"""The web inbox over HTTP (no browser): sign-in, sessions and CSRF, who sees which card, deciding
from cards and from handle links, inline errors, and every page rendering."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from signoff import Reject
from signoff.server import ServerSettings
from signoff.server.access import SESSION_COOKIE
from signoff.server.serve import login_link
from signoff.store import SQLiteStore, Store

from .live import LiveServer
from .test_serve import serving, wait_for_line

EMAIL_SCHEMA = {
    "type": "object",
    "properties": {
        "to": {"type": "string", "format": "email"},
        "subject": {"type": "string"},
        "amount": {"type": "integer", "maximum": 100},
        "urgent": {"type": "boolean"},
        "kind": {"enum": ["invoice", "reminder"]},
    },
    "required": ["to", "subject"],
    "additionalProperties": False,
}
EMAIL_ARGS = {"to": "bob@example.com", "subject": "Invoice", "amount": 5, "urgent": False, "kind": "invoice"}
CSRF_INPUT = re.compile(r'name="csrf_token" value="([^"]+)"')
HTMX = {"HX-Request": "true"}


@pytest.fixture
def server(store: Store) -> Iterator[LiveServer]:
    with LiveServer(store) as live:
        yield live


@pytest.fixture
def agent(server: LiveServer) -> Iterator[httpx.Client]:
    with server.client(server.user("bot", "agent")) as client:
        yield client


class Person:
    """A browser-like client signed in through a one-time link."""

    def __init__(self, server: LiveServer, name: str, role: Any = "member") -> None:
        server.user(name, role)
        self.name = name
        self.client = httpx.Client(base_url=server.url, timeout=30)
        response = sign_in(self.client, server, login_link(server.store, server.settings, name))
        assert response.status_code == 303, response.text
        self.csrf = _csrf(self.client.get("/").text)

    def decide(self, request_id: str, **form: str) -> httpx.Response:
        return self.client.post(
            f"/inbox/cards/{request_id}/decide", data={**form, "csrf_token": self.csrf}, headers=HTMX
        )

    def close(self) -> None:
        self.client.close()


@pytest.fixture
def alice(server: LiveServer) -> Iterator[Person]:
    person = Person(server, "alice")
    yield person
    person.close()


def sign_in(client: httpx.Client, server: LiveServer, link: str) -> httpx.Response:
    """Open a login link (GET shows "Sign in as …") and press its button (POST spends it)."""
    page = client.get(_path(server, link))
    assert page.status_code == 200, page.text
    token = re.search(r'name="token" value="([^"]+)"', page.text)
    assert token, "the page has no sign-in button"
    return client.post("/login", data={"token": token.group(1)})


def _path(server: LiveServer, url: str) -> str:
    assert url.startswith(server.url)
    return url[len(server.url) :]


def _csrf(html: str) -> str:
    found = CSRF_INPUT.search(html)
    assert found, "the page has no CSRF token"
    return found.group(1)


def ask(bot: httpx.Client, call_id: str, /, **fields: Any) -> str:
    body = {"thread_id": "t1", "tool_call_id": call_id, "tool": "send_email", "args": dict(EMAIL_ARGS)}
    body.update(fields)
    response = bot.post("/v1/requests", json=body)
    assert response.status_code == 201, response.text
    request_id: str = response.json()["id"]
    return request_id


def card_error(page: str) -> str:
    found = re.search(r'class="card-error" role="alert">([^<]*)<', page)
    assert found, "no inline error on the card"
    return html.unescape(found.group(1))


def card_ids(html: str) -> list[str]:
    return re.findall(r'<article class="card [^"]*" id="card-([^"]+)"', html)


# -- signing in ----------------------------------------------------------------------------------


def test_a_login_link_works_once(server: LiveServer) -> None:
    server.user("alice")
    link = login_link(server.store, server.settings, "alice")
    with httpx.Client(base_url=server.url) as first:
        response = sign_in(first, server, link)
        assert response.status_code == 303
        assert response.headers["location"] == "/"
        assert response.headers["referrer-policy"] == "no-referrer"
        assert first.cookies.get(SESSION_COOKIE)
        inbox = first.get("/")
        assert inbox.status_code == 200
        assert ">alice</span>" in inbox.text
    with httpx.Client(base_url=server.url) as second:
        again = second.get(_path(server, link))
        assert again.status_code == 401
        assert "already been used" in again.text
        replayed = second.post("/login", data={"token": link.split("token=", 1)[1]})
        assert replayed.status_code == 401
        assert SESSION_COOKIE not in replayed.headers.get("set-cookie", "")
        assert second.get("/").status_code == 303


def test_opening_a_login_link_only_asks_and_its_button_signs_in(server: LiveServer) -> None:
    server.user("alice")
    link = login_link(server.store, server.settings, "alice")
    token = link.split("token=", 1)[1]
    with httpx.Client(base_url=server.url) as unfurler:  # a chat unfurler, a mail scanner, a preview
        for _ in range(3):
            page = unfurler.get(_path(server, link))
            assert page.status_code == 200
            assert "<h1>Sign in as alice</h1>" in page.text
            assert "set-cookie" not in page.headers
            assert page.headers["referrer-policy"] == "no-referrer"
            assert page.headers["cache-control"] == "no-store"
        assert unfurler.get("/").status_code == 303, "fetching the link gave no session"
    assert server.store.authenticate(token, "login") is not None, "fetching the link did not spend it"
    assert [e for e in server.store.audit_entries() if e.action == "login.used"] == []
    with httpx.Client(base_url=server.url) as other_site:
        forged = other_site.post("/login", data={"token": token}, headers={"Sec-Fetch-Site": "cross-site"})
        assert forged.status_code == 403
        assert "set-cookie" not in forged.headers
    with httpx.Client(base_url=server.url) as person:
        signed_in = person.post("/login", data={"token": token}, headers={"Sec-Fetch-Site": "same-origin"})
        assert signed_in.status_code == 303
        assert ">alice</span>" in person.get("/").text
    assert server.store.authenticate(token, "login") is None


def test_the_session_cookie_is_httponly_and_samesite(server: LiveServer) -> None:
    server.user("alice")
    with httpx.Client(base_url=server.url) as client:
        response = sign_in(client, server, login_link(server.store, server.settings, "alice"))
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"{SESSION_COOKIE}=so_ses_")
    assert "HttpOnly" in cookie
    assert "samesite=lax" in cookie.lower()
    assert "Path=/" in cookie
    assert "Secure" not in cookie


def test_sessions_behind_https_get_a_secure_cookie(sqlite_store: Store) -> None:
    with LiveServer(sqlite_store, ServerSettings(sweep_interval=0.2, secure_cookies=True)) as server:
        server.user("alice")
        with httpx.Client(base_url=server.url) as client:
            response = sign_in(client, server, login_link(server.store, server.settings, "alice"))
    assert "Secure" in response.headers["set-cookie"]


def test_without_a_session_pages_send_people_to_the_login_page(server: LiveServer) -> None:
    with httpx.Client(base_url=server.url) as client:
        for path in ("/", "/history", "/rules", "/overview", "/requests/req_x"):
            response = client.get(path)
            assert response.status_code == 303, path
            assert response.headers["location"] == "/login"
        htmx = client.get("/inbox/cards/req_x", headers=HTMX)
        assert htmx.status_code == 401
        assert htmx.headers["hx-redirect"] == "/login"
        page = client.get("/login")
        assert page.status_code == 200
        assert "signoff login-link --user NAME" in page.text


def test_signing_out_revokes_the_session(server: LiveServer, alice: Person) -> None:
    session = alice.client.cookies[SESSION_COOKIE]
    response = alice.client.post("/logout", data={"csrf_token": alice.csrf})
    assert response.status_code == 303
    assert response.headers["location"].startswith("/login")
    assert "Max-Age=0" in response.headers["set-cookie"]
    with httpx.Client(base_url=server.url, cookies={SESSION_COOKIE: session}) as replay:
        assert replay.get("/").status_code == 303


def test_signing_out_needs_the_csrf_token(alice: Person) -> None:
    assert alice.client.post("/logout", data={}).status_code == 403
    assert alice.client.get("/").status_code == 200


# -- CSRF and who sees what --------------------------------------------------------------------------


def test_a_post_without_the_csrf_token_is_refused_and_decides_nothing(
    server: LiveServer, agent: httpx.Client, alice: Person
) -> None:
    request_id = ask(agent, "c1")
    missing = alice.client.post(f"/inbox/cards/{request_id}/decide", data={"type": "approve"})
    assert missing.status_code == 403
    assert "CSRF" in missing.text
    wrong = alice.client.post(
        f"/inbox/cards/{request_id}/decide", data={"type": "approve", "csrf_token": "not-the-token"}
    )
    assert wrong.status_code == 403
    assert server.store.get_request(request_id).status == "pending"
    header = alice.client.post(
        f"/inbox/cards/{request_id}/decide", data={"type": "approve"}, headers={"X-CSRF-Token": alice.csrf}
    )
    assert header.status_code == 303
    assert server.store.get_request(request_id).status == "approved"


def test_a_second_person_does_not_see_the_first_persons_card(
    server: LiveServer, agent: httpx.Client, alice: Person
) -> None:
    request_id = ask(agent, "c1", approvers=["alice"])
    bob = Person(server, "bob")
    try:
        assert request_id in card_ids(alice.client.get("/").text)
        assert request_id not in bob.client.get("/").text
        assert request_id not in bob.client.get("/history").text
        page = bob.client.get(f"/requests/{request_id}")
        assert page.status_code == 403
        assert "text/html" in page.headers["content-type"]
        assert "not an approver" in page.text
        assert bob.client.get(f"/inbox/cards/{request_id}", headers=HTMX).status_code == 403
        refused = bob.decide(request_id, type="approve")
        assert refused.status_code == 403
        link = bob.client.post(f"/inbox/cards/{request_id}/link", headers={**HTMX, "X-CSRF-Token": bob.csrf})
        assert link.status_code == 403
    finally:
        bob.close()
    assert server.store.get_request(request_id).status == "pending"
    refusals = list(server.store.audit_entries(request_id=request_id, action="request.view_refused"))
    assert {entry.actor for entry in refusals} == {"bob"}


def test_an_admin_sees_every_card_but_decides_only_as_an_approver(
    server: LiveServer, agent: httpx.Client, alice: Person
) -> None:
    request_id = ask(agent, "c1", approvers=["alice"])
    root = Person(server, "root", "admin")
    try:
        card = root.client.get("/").text
        assert request_id in card_ids(card)
        assert 'data-action="approve"' not in card
        assert "only its approvers decide (alice)" in card
        assert root.decide(request_id, type="approve").status_code == 403
    finally:
        root.close()
    assert 'data-action="approve"' in alice.client.get(f"/inbox/cards/{request_id}").text
    assert server.store.get_request(request_id).status == "pending"


def test_unknown_requests_get_a_404_page(alice: Person) -> None:
    page = alice.client.get("/requests/req_does_not_exist")
    assert page.status_code == 404
    assert "text/html" in page.headers["content-type"]
    assert "no request with id" in page.text


# -- cards -----------------------------------------------------------------------------------------


def test_cards_offer_only_the_decisions_the_rule_allows(agent: httpx.Client, alice: Person) -> None:
    narrow = ask(agent, "c1", rule={"allowed_decisions": ["approve", "reject"]})
    question = ask(
        agent,
        "c2",
        tool="ask_user",
        kind="input",
        args={},
        description="Deploy where?",
        answer_schema={"enum": ["prod", "staging"]},
    )
    narrow_card = alice.client.get(f"/inbox/cards/{narrow}").text
    assert re.findall(r'data-action="(\w+)"', narrow_card) == ["approve", "reject"]
    question_card = alice.client.get(f"/inbox/cards/{question}").text
    assert re.findall(r'data-action="(\w+)"', question_card) == ["respond", "reject"]
    assert "Deploy where?" in question_card
    form = alice.client.get(f"/inbox/cards/{question}/panels/respond").text
    assert '<option value="&#34;prod&#34;"' in form


def test_a_drafting_card_shows_its_args_with_buttons_disabled(
    server: LiveServer, agent: httpx.Client, alice: Person
) -> None:
    request_id = ask(agent, "c1", drafting=True, args={"to": "bob@exam"})
    card = alice.client.get(f"/inbox/cards/{request_id}").text
    assert "drafting…" in card
    assert "bob@exam" in card
    assert 'data-action="approve" disabled' in card
    refused = alice.decide(request_id, type="approve")
    assert refused.status_code == 409
    assert card_error(refused.text) == "Still drafting: the agent has not finished its arguments yet."
    assert server.store.get_request(request_id).status == "drafting"


def test_redacted_args_never_reach_the_page_and_edits_keep_them(
    server: LiveServer, agent: httpx.Client, alice: Person
) -> None:
    request_id = ask(
        agent,
        "c1",
        tool="call_api",
        args={"url": "https://example.com", "api_key": "sk-very-secret"},
        rule={"redact": ["api_key"]},
    )
    for path in ("/", f"/requests/{request_id}", f"/inbox/cards/{request_id}/panels/edit"):
        assert "sk-very-secret" not in alice.client.get(path).text, path
    response = alice.decide(request_id, type="edit", arg='{"url": "https://example.org", "api_key": "***"}')
    assert response.status_code == 200, response.text
    decided = server.store.get_request(request_id)
    assert decided.status == "edited"
    assert decided.final_args == {"url": "https://example.org", "api_key": "sk-very-secret"}


def test_an_edit_that_breaks_the_schema_shows_the_error_and_stays_pending(
    server: LiveServer, agent: httpx.Client, alice: Person
) -> None:
    request_id = ask(agent, "c1", args_schema=EMAIL_SCHEMA)
    edit = {
        "type": "edit",
        "arg.to": "carol@example.com",
        "arg.subject": "Invoice",
        "arg.amount": "500",
        "arg.kind": '"reminder"',
    }
    refused = alice.decide(request_id, **edit)
    assert refused.status_code == 422
    assert "500 is greater than the maximum of 100" in card_error(refused.text)
    assert 'value="500"' in refused.text, "the form comes back with what was typed"
    assert 'name="arg.amount"' in refused.text, "the edit form stays open"
    assert server.store.get_request(request_id).status == "pending"

    accepted = alice.decide(request_id, **{**edit, "arg.amount": "50", "arg.urgent": "true"})
    assert accepted.status_code == 200
    assert "Approved with your changes." in accepted.text
    decided = server.store.get_request(request_id)
    assert decided.status == "edited"
    assert decided.final_args == {
        "to": "carol@example.com",
        "subject": "Invoice",
        "amount": 50,
        "urgent": True,
        "kind": "reminder",
    }
    assert decided.decision is not None
    assert (decided.decision.actor, decided.decision.channel) == ("alice", "web")


def test_bad_json_in_an_edit_is_an_inline_error(
    server: LiveServer, agent: httpx.Client, alice: Person
) -> None:
    request_id = ask(agent, "c1")
    refused = alice.decide(request_id, type="edit", arg='{"to": ')
    assert refused.status_code == 422
    assert "not valid JSON" in card_error(refused.text)
    assert server.store.get_request(request_id).status == "pending"


def test_reject_with_a_reason_and_respond(server: LiveServer, agent: httpx.Client, alice: Person) -> None:
    rejected = ask(agent, "c1")
    response = alice.decide(rejected, type="reject", message="Wrong recipient")
    assert response.status_code == 200
    assert "Wrong recipient" in response.text
    request = server.store.get_request(rejected)
    assert request.status == "rejected"
    assert request.decision is not None
    assert request.decision.decision == Reject(message="Wrong recipient")

    answered = ask(
        agent, "c2", tool="ask_user", kind="input", args={}, answer_schema={"enum": ["prod", "staging"]}
    )
    assert alice.decide(answered, type="respond", answer='"staging"').status_code == 200
    request = server.store.get_request(answered)
    assert request.status == "responded"
    assert request.decision is not None
    assert request.to_dict()["decision"]["value"] == "staging"

    empty = ask(agent, "c3")
    refused = alice.decide(empty, type="respond", message="  ")
    assert refused.status_code == 422
    assert card_error(refused.text) == "Write a response first"
    assert server.store.get_request(empty).status == "pending"


def test_deciding_twice_says_who_decided_first(
    server: LiveServer, agent: httpx.Client, alice: Person
) -> None:
    request_id = ask(agent, "c1")
    assert alice.decide(request_id, type="approve").status_code == 200
    again = alice.decide(request_id, type="reject", message="too late")
    assert again.status_code == 409
    assert card_error(again.text) == "Already approved by alice."
    assert "Traceback" not in again.text
    assert server.store.get_request(request_id).status == "approved"


def test_a_decision_the_rule_does_not_allow_is_refused_inline(
    server: LiveServer, agent: httpx.Client, alice: Person
) -> None:
    request_id = ask(agent, "c1", rule={"allowed_decisions": ["approve", "reject"]})
    refused = alice.decide(request_id, type="edit", arg='{"to": "x@example.com"}')
    assert refused.status_code == 422
    assert "'edit' is not allowed for this request" in card_error(refused.text)
    assert server.store.get_request(request_id).status == "pending"


def test_a_plain_form_post_lands_on_the_request_page(
    server: LiveServer, agent: httpx.Client, alice: Person
) -> None:
    request_id = ask(agent, "c1")
    response = alice.client.post(
        f"/inbox/cards/{request_id}/decide", data={"type": "approve", "csrf_token": alice.csrf}
    )
    assert response.status_code == 303
    assert response.headers["location"] == f"/requests/{request_id}"
    assert server.store.get_request(request_id).status == "approved"


# -- handle links ----------------------------------------------------------------------------------


def make_handle(server: LiveServer, person: Person, request_id: str) -> str:
    response = person.client.post(
        f"/inbox/cards/{request_id}/link", headers={**HTMX, "X-CSRF-Token": person.csrf}
    )
    assert response.status_code == 200
    found = re.search(r'value="(http[^"]+/h/so_hdl_[^"]+)"', response.text)
    assert found, response.text
    return _path(server, found.group(1))


def test_opening_a_handle_link_decides_nothing_and_posting_it_decides(
    server: LiveServer, agent: httpx.Client, alice: Person
) -> None:
    request_id = ask(agent, "c1", approvers=["alice"])
    handle = make_handle(server, alice, request_id)
    with httpx.Client(base_url=server.url) as phone:
        for _ in range(3):  # a mail scanner, a link preview, the person
            page = phone.get(handle)
            assert page.status_code == 200
            assert page.headers["referrer-policy"] == "no-referrer"
            assert "Nothing happens until you press a button" in page.text
        assert server.store.get_request(request_id).status == "pending"
        assert "hx-post" not in page.text and "csrf_token" not in page.text
        decided = phone.post(handle, data={"type": "reject", "message": "not now"})
        assert decided.status_code == 200
        assert "Rejected by alice" in decided.text
        again = phone.post(handle, data={"type": "approve"})
        assert again.status_code == 409
    request = server.store.get_request(request_id)
    assert request.status == "rejected"
    assert request.decision is not None
    assert (request.decision.actor, request.decision.channel) == ("alice", "link")


def test_unknown_handles_get_a_clear_page(server: LiveServer) -> None:
    with httpx.Client(base_url=server.url) as client:
        for method in ("GET", "POST"):
            page = client.request(method, "/h/so_hdl_nope")
            assert page.status_code == 404
            assert "This link has expired" in page.text


def test_a_handle_stops_working_once_the_person_may_not_see_the_request(
    server: LiveServer, agent: httpx.Client
) -> None:
    request_id = ask(agent, "c1", approvers=["alice"])
    server.user("bob")
    secret, _ = server.store.issue_credential("handle", "bob", request_id=request_id, actor="test")
    with httpx.Client(base_url=server.url) as client:
        assert client.get(f"/h/{secret}").status_code == 404
        assert client.post(f"/h/{secret}", data={"type": "approve"}).status_code == 404
    assert server.store.get_request(request_id).status == "pending"


# -- pages -----------------------------------------------------------------------------------------


def test_every_page_renders(server: LiveServer, agent: httpx.Client, alice: Person) -> None:
    request_id = ask(agent, "c1", args_schema=EMAIL_SCHEMA, agent="mailer", app="crm")
    done = ask(agent, "c2", agent="mailer")
    alice.decide(done, type="reject", message="no")
    pages = {
        "/": "Inbox",
        f"/requests/{request_id}": "Audit trail",
        f"/requests/{done}": "Rejected by alice",
        "/history": "History",
        "/rules": "Defaults",
        "/overview": "Time to decision",
        f"/inbox/cards/{request_id}": f'id="card-{request_id}"',
        f"/inbox/cards/{request_id}/panels/edit": 'name="arg.amount"',
        f"/inbox/cards/{request_id}/panels/reject": 'name="message"',
    }
    for path, expected in pages.items():
        response = alice.client.get(path)
        assert response.status_code == 200, path
        assert expected in response.text, path
        assert "default-src 'self'" in response.headers["content-security-policy"]
    assert alice.client.get("/inbox/count").text == "1"
    full = alice.client.get(f"/inbox/cards/{request_id}?full=1").text
    assert 'name="arg.amount"' in full and f'href="/requests/{request_id}"' not in full
    for asset, kind in (("htmx.min.js", "javascript"), ("inbox.js", "javascript"), ("inbox.css", "css")):
        response = alice.client.get(f"/static/{asset}")
        assert response.status_code == 200
        assert kind in response.headers["content-type"]
    assert "htmx" in alice.client.get("/static/htmx.min.js").text[:100]


def test_the_request_page_shows_the_decision_and_the_audit_trail(
    server: LiveServer, agent: httpx.Client, alice: Person
) -> None:
    request_id = ask(agent, "c1")
    alice.decide(request_id, type="reject", message="Not this week")
    page = alice.client.get(f"/requests/{request_id}").text
    assert "request.created" in page and "request.decided" in page
    assert "Rejected by alice" in page and "Not this week" in page


def test_the_request_page_shows_the_delivery_log(
    server: LiveServer, agent: httpx.Client, alice: Person
) -> None:
    request_id = ask(agent, "c1")
    server.store.record_delivery(
        request_id, channel="email", target="alice@example.com", result="failed", detail="550"
    )
    page = alice.client.get(f"/requests/{request_id}").text
    assert "alice@example.com" in page and "badge-failed" in page


def test_the_inbox_pages_through_open_requests_50_at_a_time(agent: httpx.Client, alice: Person) -> None:
    made = [ask(agent, f"c{index}") for index in range(53)]
    first = alice.client.get("/").text
    shown = card_ids(first)
    assert shown == list(reversed(made))[:50]
    assert '<span class="count" id="waiting-count" title="Waiting for a decision">50+</span>' in first
    cursor = re.search(r'hx-get="/inbox/cards\?cursor=([^"]+)"', first)
    assert cursor
    more = alice.client.get(f"/inbox/cards?cursor={cursor.group(1)}").text
    assert card_ids(more) == list(reversed(made))[50:]
    assert "Load more" not in more


def test_history_filters_and_search_narrow_the_list(
    server: LiveServer, agent: httpx.Client, alice: Person
) -> None:
    mail = ask(agent, "c1", agent="mailer", app="crm", description="Send the March invoice")
    shell = ask(agent, "c2", tool="run_shell", args={"cmd": "ls"}, agent="ops", app="infra")
    other = ask(agent, "c3", tool="run_shell", args={"cmd": "df"}, agent="ops", app="crm")
    alice.decide(shell, type="reject")

    def listed(query: str) -> set[str]:
        response = alice.client.get(f"/history?{query}")
        assert response.status_code == 200
        return set(re.findall(r'<tr data-id="([^"]+)"', response.text))

    assert listed("") == {mail, shell, other}
    assert listed("tool=run_shell") == {shell, other}
    assert listed("agent=mailer") == {mail}
    assert listed("app=crm") == {mail, other}
    assert listed("status=rejected") == {shell}
    assert listed("status=pending&tool=run_shell") == {other}
    assert listed("q=march") == {mail}
    assert listed("q=nothing-matches") == set()
    assert listed("status=bogus") == {mail, shell, other}


def test_history_pages_with_a_cursor(agent: httpx.Client, alice: Person) -> None:
    made = [ask(agent, f"c{index}") for index in range(52)]
    first = alice.client.get("/history").text
    assert re.findall(r'<tr data-id="([^"]+)"', first) == list(reversed(made))[:50]
    older = re.search(r'href="/history\?(cursor=[^"]+)" rel="next"', first)
    assert older
    second = alice.client.get(f"/history?{older.group(1)}").text
    assert re.findall(r'<tr data-id="([^"]+)"', second) == list(reversed(made))[50:]
    assert 'rel="next"' not in second


def test_the_rules_page_shows_the_layers_and_explains_a_call(server: LiveServer, alice: Person) -> None:
    server.store.set_layer("tool", "delete_records", {"requires_approval": True}, actor="test")
    server.store.set_layer("agent", "janitor", {"interrupt_on": {"delete_records": False}}, actor="test")
    page = alice.client.get("/rules").text
    assert "delete_records" in page and "janitor" in page
    asks = alice.client.get("/rules", params={"tool": "delete_records", "agent": "cleaner"}).text
    assert "<strong>Asks</strong>" in asks
    silenced = alice.client.get("/rules", params={"tool": "delete_records", "agent": "janitor"}).text
    assert "<strong>Does not ask</strong>" in silenced
    assert "decided by the <b>agent</b> layer" in silenced
    bad = alice.client.get("/rules", params={"tool": "delete_records", "args": "{nope"}).text
    assert "The args are not valid JSON" in bad


def test_the_overview_counts_what_is_waiting(server: LiveServer, agent: httpx.Client, alice: Person) -> None:
    for index in range(3):
        ask(agent, f"mail{index}", agent="mailer")
    ask(agent, "shell", tool="run_shell", args={"cmd": "ls"}, agent="ops")
    decided = ask(agent, "done", agent="mailer")
    alice.decide(decided, type="approve")
    page = alice.client.get("/overview").text
    bars = dict(
        re.findall(r'<span class="hbar-label" title="([^"]+)">.*?</span>.*?"hbar-value">(\d+)<', page, re.S)
    )
    assert bars == {"send_email": "3", "run_shell": "1", "mailer": "3", "ops": "1"}
    assert '<span class="tile-value">4</span><span class="tile-label">Waiting now</span>' in page
    assert '<span class="tile-value">100%</span><span class="tile-label">Approved</span>' in page


# -- words ----------------------------------------------------------------------------------------


def test_after_deciding_a_handle_page_says_it_is_closed_and_a_rejection_is_not_green(
    server: LiveServer, agent: httpx.Client, alice: Person
) -> None:
    request_id = ask(agent, "c1", approvers=["alice"])
    handle = make_handle(server, alice, request_id)
    with httpx.Client(base_url=server.url) as phone:
        decided = phone.post(handle, data={"type": "reject", "message": "not now"})
        later = phone.get(handle)
    for page in (decided.text, later.text):
        assert "Your decision is needed" not in page
        assert "Nothing happens until you press a button" not in page
        assert "<h1>Decided</h1>" in page
        assert "This request is closed" in page
    assert '<p class="notice notice-bad" role="status">Rejected.</p>' in decided.text
    approved = ask(agent, "c2")
    shown = alice.decide(approved, type="approve").text
    assert '<p class="notice notice-ok" role="status">Approved.</p>' in shown


def test_a_cancel_is_labelled_with_who_cancelled(
    server: LiveServer, agent: httpx.Client, alice: Person
) -> None:
    by_a_person = ask(agent, "c1")
    server.store.cancel(by_a_person, actor="alice", channel="cli", reason="not needed")
    card = alice.client.get(f"/inbox/cards/{by_a_person}").text
    assert "Cancelled by alice" in card
    assert "by the agent" not in card
    assert "via cli" in card
    by_the_agent = ask(agent, "c2")
    assert agent.post(f"/v1/requests/{by_the_agent}/cancel", json={}).status_code == 200
    assert "Cancelled by the agent (bot)" in alice.client.get(f"/inbox/cards/{by_the_agent}").text
    refused = alice.decide(by_a_person, type="approve")
    assert card_error(refused.text) == "Cancelled by alice."


def test_a_second_decision_on_an_answered_request_says_answered(
    server: LiveServer, agent: httpx.Client, alice: Person
) -> None:
    request_id = ask(agent, "c1")
    assert alice.decide(request_id, type="respond", message="It is done.").status_code == 200
    again = alice.decide(request_id, type="approve")
    assert card_error(again.text) == "Already answered by alice."
    api = httpx.post(
        f"{server.url}/v1/requests/{request_id}/decision",
        json={"type": "approve"},
        headers={"Authorization": f"Bearer {server.user('alice')}"},
    )
    assert api.status_code == 409
    assert api.json()["error"]["message"] == f"request {request_id} was already answered by alice"


def test_a_question_card_is_titled_question_and_does_not_repeat_it(
    server: LiveServer, agent: httpx.Client, alice: Person
) -> None:
    question = "Which region should I deploy to?"
    request_id = ask(
        agent, "q1", tool="signoff.ask", kind="input", args={"question": question}, description=question
    )
    card = alice.client.get(f"/inbox/cards/{request_id}").text
    assert f'id="title-{request_id}">Question</h2>' in card
    assert "signoff.ask" not in card
    assert card.count(question) == 1
    assert ">Question</a>" in alice.client.get("/history").text


# -- hidden characters -------------------------------------------------------------------------------

SPOOFED_PATH = "/home/user/\u202etxt.hsab_ekam"
"""Reads as /home/user/make_bash.txt when rendered as it is."""


@pytest.mark.parametrize(
    ("field", "value", "character"),
    [
        ("tool", "safe_tool\nApproved by admin", "U+000A LINE FEED"),
        ("tool", "send\u200bemail", "U+200B ZERO WIDTH SPACE"),
        ("agent", "mail\u202erelie", "U+202E RIGHT-TO-LEFT OVERRIDE"),
        ("app", "crm\0", "U+0000 NUL"),
    ],
)
def test_names_with_hidden_characters_are_refused_at_the_api(
    server: LiveServer, agent: httpx.Client, field: str, value: str, character: str
) -> None:
    body = {"thread_id": "t1", "tool_call_id": "c1", "tool": "send_email", "args": {}, field: value}
    refused = agent.post("/v1/requests", json=body)
    assert refused.status_code == 422
    error = refused.json()["error"]
    assert error["type"] == "InvalidInput"
    assert f"{field} " in error["message"] and character in error["message"]
    assert server.store.list_requests() == []


def test_hidden_characters_in_args_are_shown_escaped_with_a_warning_everywhere(
    server: LiveServer, agent: httpx.Client, alice: Person
) -> None:
    args = {"path": SPOOFED_PATH, "mode": "a\u200bb", "body": "line one\nline two"}
    schema = {"type": "object", "properties": {key: {"type": "string"} for key in args}}
    request_id = ask(agent, "c1", tool="write_file", args=args, args_schema=schema, approvers=["alice"])
    handle = make_handle(server, alice, request_id)
    pages = {
        "inbox": alice.client.get("/").text,
        "card": alice.client.get(f"/inbox/cards/{request_id}").text,
        "request page": alice.client.get(f"/requests/{request_id}").text,
        "edit form": alice.client.get(f"/inbox/cards/{request_id}/panels/edit").text,
        "history": alice.client.get("/history").text,
        "handle": httpx.get(server.url + handle).text,
    }
    for where, page in pages.items():
        assert "\u202e" not in page and "\u200b" not in page, where
        assert "\\u202e" in page or where == "history", where  # history shows no args, only a marker
    for where in ("inbox", "card", "request page", "handle"):
        warning = re.search(r'<p class="hidden-warning" role="note">(.*?)</p>', pages[where], re.S)
        assert warning, where
        assert "U+202E RIGHT-TO-LEFT OVERRIDE" in warning.group(1)
        assert "U+200B ZERO WIDTH SPACE" in warning.group(1)
        assert "LINE FEED" not in warning.group(1), "line breaks in a value are shown as line breaks"
    assert "line one\nline two" in pages["card"]
    assert "hidden characters" in pages["history"]
    assert "Hidden characters (U+202E RIGHT-TO-LEFT OVERRIDE) are shown as escapes" in pages["edit form"]
    # the audit trail on the request page shows the args as JSON, escaped the same way
    assert '"path": "/home/user/\\u202etxt.hsab_ekam"' in html.unescape(pages["request page"])

    # an edit form sent back as shown keeps the value exactly (the escapes are not taken literally)
    shown = re.search(r'name="arg.path" value="([^"]*)"', pages["edit form"])
    assert shown and html.unescape(shown.group(1)) == "/home/user/\\u202etxt.hsab_ekam"
    edit = {"type": "edit", "arg.path": html.unescape(shown.group(1)), "arg.mode": "ab"}
    edit["arg.body"] = "line one\r\nline two"  # as a browser sends a textarea
    assert alice.decide(request_id, **edit).status_code == 200
    assert server.store.get_request(request_id).final_args == {**args, "mode": "ab"}


# -- required fields -----------------------------------------------------------------------------------


def test_a_blank_required_field_is_refused_next_to_it_in_plain_words(
    server: LiveServer, agent: httpx.Client, alice: Person
) -> None:
    request_id = ask(agent, "c1", args_schema=EMAIL_SCHEMA)
    edit = {"type": "edit", "arg.to": "", "arg.subject": "  ", "arg.amount": "5", "arg.kind": '"invoice"'}
    refused = alice.decide(request_id, **edit)
    assert refused.status_code == 422
    assert card_error(refused.text) == "To is required; Subject is required"
    for name, message in (("to", "To is required"), ("subject", "Subject is required")):
        field = re.search(
            rf'<label class="field field-text field-invalid">.*?name="arg\.{name}"(.*?)</label>',
            refused.text,
            re.S,
        )
        assert field, f"the {name} field is not highlighted"
        assert 'aria-invalid="true"' in field.group(1)
        assert f'-error">{message}</small>' in field.group(1)
    assert "required property" not in refused.text
    assert server.store.get_request(request_id).status == "pending"
    assert 'data-required="To is required"' in alice.client.get(f"/inbox/cards/{request_id}/panels/edit").text


def test_a_blank_required_answer_field_is_refused_next_to_it(
    server: LiveServer, agent: httpx.Client, alice: Person
) -> None:
    schema = {"type": "object", "properties": {"env": {"type": "string"}}, "required": ["env"]}
    request_id = ask(agent, "q1", tool="ask_user", kind="input", args={}, answer_schema=schema)
    refused = alice.decide(request_id, type="respond", **{"answer.env": ""})
    assert refused.status_code == 422
    assert card_error(refused.text) == "Env is required"
    assert 'class="field field-text field-invalid"' in refused.text
    assert server.store.get_request(request_id).status == "pending"


# -- edits show what changed ----------------------------------------------------------------------


def test_an_edit_shows_what_changed_on_the_card_the_request_page_and_the_audit_trail(
    server: LiveServer, agent: httpx.Client, alice: Person
) -> None:
    request_id = ask(agent, "c1", args_schema=EMAIL_SCHEMA)
    edit = {
        "type": "edit",
        "arg.to": "carol@example.com",
        "arg.subject": "Invoice",
        "arg.amount": "5",
        "arg.kind": '"reminder"',
    }
    card = alice.decide(request_id, **edit).text
    page = alice.client.get(f"/requests/{request_id}").text

    def shown_changes(text: str) -> list[tuple[str, str, str]]:
        rows = re.findall(
            r'<div class="change change-changed"><dt>([^<]+)</dt><dd><del>([^<]*)</del>.*?<ins>([^<]*)</ins>',
            text,
        )
        return [tuple(html.unescape(part) for part in row) for row in rows]

    expected = [("to", "bob@example.com", "carol@example.com"), ("kind", "invoice", "reminder")]
    assert shown_changes(card) == expected
    request_main = page.split('<aside class="request-side">')[0]
    side = page.split('<aside class="request-side">')[1]
    audit = request_main.split('id="audit-title"')[1]
    assert shown_changes(request_main.split('id="audit-title"')[0]) == expected, "on the card"
    assert shown_changes(audit) == expected, "in the audit trail"
    assert shown_changes(side) == expected, "in the decision's details"
    assert "What changed" in card


# -- Secure cookies behind HTTPS (signoff serve, a real process) ----------------------------------------


def _signed_in_cookie(url: str, db: Path, headers: dict[str, str] | None = None) -> str:
    store = SQLiteStore(db)
    try:
        if store.get_user("alice") is None:
            store.add_user("alice", role="member", actor="test")
        token = login_link(store, ServerSettings(base_url=url), "alice").split("token=", 1)[1]
    finally:
        store.close()
    with httpx.Client(base_url=url, headers=headers or {}) as client:
        response = client.post("/login", data={"token": token})
    assert response.status_code == 303, response.text
    cookie: str = response.headers["set-cookie"]
    return cookie


@pytest.mark.slow
def test_an_https_base_url_makes_the_session_cookie_secure(tmp_path: Path) -> None:
    db = tmp_path / "signoff.db"
    seen: list[str] = []
    with serving(db, "--base-url", "https://signoff.example.com") as (url, lines):
        link = wait_for_line(lines, "/login?token=so_log_", seen).strip()
        assert link.startswith("https://signoff.example.com/login?token=")
        cookie = _signed_in_cookie(url, db)
    assert "Secure" in cookie and "HttpOnly" in cookie


@pytest.mark.slow
def test_a_trusted_proxy_saying_https_makes_the_session_cookie_secure(tmp_path: Path) -> None:
    db = tmp_path / "signoff.db"
    https = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.7"}
    with serving(db, "--forwarded-allow-ips", "127.0.0.1") as (url, _lines):
        assert "Secure" in _signed_in_cookie(url, db, https)
        assert "Secure" not in _signed_in_cookie(url, db), "plain HTTP through the proxy"
    with serving(db) as (url, _lines):  # no proxy trusted: anyone could send the header
        assert "Secure" not in _signed_in_cookie(url, db, https)
