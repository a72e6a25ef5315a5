"""Email end to end: a real server whose outbox mails a real SMTP server (aiosmtpd); the mail's
link opens the person's handle page, where a GET (what mail scanners do, with or without the
button's `?decision=` hint) decides nothing and only the POST decides, once; the final state and
the execution's result arrive threaded under the first mail."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest

from signoff._util import utcnow
from signoff.channels import ChannelRegistry, parse_config
from signoff.requests import NewRequest
from signoff.rules.effective import RequestRule
from signoff.store import Store
from tests.helpers import decided_digest

from ..live import LiveServer
from ..test_outbox import QUICK, wait_until
from .mailserver import MailServer
from .test_email import header, parts

ALICE = "alice@example.com"
LINK = re.compile(r"(http://127\.0\.0\.1:\d+/h/[A-Za-z0-9_\-]+)\?decision=approve")


@pytest.fixture
def smtp() -> Iterator[MailServer]:
    with MailServer() as server:
        yield server


@pytest.fixture
def server(store: Store, smtp: MailServer) -> Iterator[LiveServer]:
    for name in ("alice", "bob"):
        store.add_user(name, role="member", actor="test")
    store.set_address("alice", "email", ALICE, actor="test")
    config = parse_config(
        {"mail": {"kind": "email", "from": "signoff <approvals@example.com>", "port": smtp.port}}
    )
    with LiveServer(store, QUICK, channels=ChannelRegistry.from_configs(config)) as live:
        yield live


def ask(
    store: Store,
    call: str = "m1",
    *,
    decisions: tuple[str, ...] = ("approve", "reject"),
    seconds: float = 86400,
) -> str:
    new = NewRequest(
        thread_id="thread-m",
        tool_call_id=call,
        tool_name="send_email",
        args={"to": "bob@example.com", "subject": "Q3 numbers"},
        description="Mail the Q3 numbers to bob",
        deadline=utcnow() + timedelta(seconds=seconds),
        rule=RequestRule(approvers=("alice",), channels=("mail",), allowed_decisions=decisions),  # type: ignore[arg-type]
    )
    return store.create_request(new)[0].id


def status(store: Store, request_id: str) -> str:
    return store.get_request(request_id).status.value


def test_a_get_on_the_link_decides_nothing_and_the_post_decides_once(
    server: LiveServer, smtp: MailServer
) -> None:
    store = server.store
    request_id = ask(store)
    (first,) = smtp.handler.wait_for(1)
    mail = first.mail
    assert first.recipients == [ALICE]
    assert mail["Subject"] == "[signoff] AI wants to run: send_email"
    assert header(mail, "Message-ID").startswith(f"<{request_id}.")
    plain, page_html = parts(mail)
    found = LINK.search(plain)
    assert found is not None, plain
    link = found.group(1)
    assert f'href="{link}?decision=approve"' in page_html
    assert f'href="{link}?decision=reject"' in page_html
    with httpx.Client(timeout=30) as browser:
        for hint in ("", "?decision=approve", "?decision=reject", "?decision=edit", "?decision=junk"):
            shown = browser.get(link + hint)
            assert shown.status_code == 200
            assert "Nothing happens until you press a button" in shown.text
        assert (
            "You chose Approve: press Approve below to confirm"
            in browser.get(f"{link}?decision=approve").text
        )
        assert status(store, request_id) == "pending"
        assert store.get_request(request_id).decision is None
        decided = browser.post(link, data={"type": "approve"})
        assert decided.status_code == 200
        assert "Approved." in decided.text
        again = browser.post(link, data={"type": "reject", "message": "changed my mind"})
        assert again.status_code == 409
        assert "Already approved by alice" in html.unescape(again.text)
    request = store.get_request(request_id)
    assert request.status.value == "approved"
    assert request.decision is not None and (request.decision.actor, request.decision.channel) == (
        "alice",
        "link",
    )
    received = smtp.handler.wait_for(2)
    closing = received[1].mail
    assert header(closing, "In-Reply-To") == header(mail, "Message-ID")
    assert header(closing, "References") == header(mail, "Message-ID")
    assert closing["Subject"] == "Re: [signoff] AI wants to run: send_email"
    closing_plain, closing_html = parts(closing)
    assert closing_plain.startswith("✅ Approved by alice\n")
    assert "/h/" not in closing_plain and "/h/" not in closing_html
    claim = store.claim_execution(
        request_id, args_digest=decided_digest(store, request_id), lease=timedelta(minutes=1)
    )
    assert claim.token is not None
    store.finish_execution(request_id, claim.token, succeeded=True, result={"sent": True})
    result = smtp.handler.wait_for(3)[2].mail
    assert header(result, "In-Reply-To") == header(mail, "Message-ID")
    assert parts(result)[0].startswith('✅ send_email ran\nResult: {"sent": true}\n')
    assert len(smtp.handler.received) == 3


def test_the_reject_button_opens_the_reason_form_and_its_post_rejects(
    server: LiveServer, smtp: MailServer
) -> None:
    store = server.store
    request_id = ask(store, "m2")
    plain, _ = parts(smtp.handler.wait_for(1)[0].mail)
    found = LINK.search(plain)
    assert found is not None
    link = found.group(1)
    page = httpx.get(f"{link}?decision=reject", timeout=30)
    assert "You chose Reject" in page.text
    assert 'name="message"' in page.text
    assert status(store, request_id) == "pending"
    rejected = httpx.post(link, data={"type": "reject", "message": "not before the audit"}, timeout=30)
    assert rejected.status_code == 200
    assert status(store, request_id) == "rejected"
    closing = smtp.handler.wait_for(2)[1].mail
    closing_plain, _ = parts(closing)
    assert closing_plain.startswith("❌ Rejected by alice\n")
    assert "Reason: not before the audit" in closing_plain


def test_a_cancelled_request_is_mailed_as_cancelled_in_the_thread(
    server: LiveServer, smtp: MailServer
) -> None:
    request_id = ask(server.store, "m3")
    first = smtp.handler.wait_for(1)[0].mail
    server.store.cancel(request_id, actor="agent", reason="run aborted")
    closing = smtp.handler.wait_for(2)[1].mail
    assert header(closing, "In-Reply-To") == header(first, "Message-ID")
    assert parts(closing)[0].startswith("🚫 Cancelled by agent\n")


def test_an_expired_request_is_mailed_as_expired_and_its_link_stops_working(
    server: LiveServer, smtp: MailServer
) -> None:
    request_id = ask(server.store, "m5", seconds=1.5)
    first = smtp.handler.wait_for(1)[0].mail
    found = LINK.search(parts(first)[0])
    assert found is not None
    wait_until(lambda: status(server.store, request_id) == "expired")
    closing = smtp.handler.wait_for(2)[1].mail
    assert header(closing, "In-Reply-To") == header(first, "Message-ID")
    assert parts(closing)[0].startswith("⌛ Expired\n")
    assert httpx.get(found.group(1), timeout=30).status_code == 404
    assert httpx.post(found.group(1), data={"type": "approve"}, timeout=30).status_code == 404
    assert status(server.store, request_id) == "expired"


def test_an_smtp_server_that_is_down_is_retried_until_it_is_up(sqlite_store: Store) -> None:
    sqlite_store.add_user("alice", role="member", actor="test")
    sqlite_store.set_address("alice", "email", ALICE, actor="test")
    smtp = MailServer()
    config = parse_config({"mail": {"kind": "email", "from": "approvals@example.com", "port": smtp.port}})
    with LiveServer(sqlite_store, QUICK, channels=ChannelRegistry.from_configs(config)):
        request_id = ask(sqlite_store, "m4")
        wait_until(lambda: len(sqlite_store.delivery_attempts(request_id)) >= 1)
        with smtp:
            (got,) = smtp.handler.wait_for(1)
            wait_until(lambda: sqlite_store.outbox_for(request_id)[0].state == "sent")
    attempts = sqlite_store.delivery_attempts(request_id)
    assert [attempt.outcome for attempt in attempts][-1] == "sent"
    assert all(attempt.outcome == "retrying" for attempt in attempts[:-1])
    assert got.mail["X-Signoff-Request"] == request_id
