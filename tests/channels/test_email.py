"""The email channel against a real SMTP server (aiosmtpd): the mail's headers and both parts,
its links, the final-state mail threaded under it, the result mail, STARTTLS with a login, and
what each SMTP failure means for the outbox (retry or not)."""

from __future__ import annotations

import asyncio
import itertools
import re
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest

from signoff import Approve, Reject
from signoff._util import utcnow
from signoff.channels import DeliveryError, build_follow_up, build_notice, parse_config
from signoff.channels.email import EmailChannel
from signoff.channels.registry import build_channel
from signoff.errors import ConfigError
from signoff.requests import NewRequest
from signoff.rules.effective import RequestRule
from signoff.store import Store
from tests.helpers import decided_digest

from .mailserver import MailServer, make_certificates

CALLS = itertools.count(1)
ALICE = "alice@example.com"


def channel(port: int | None, **settings: object) -> EmailChannel:
    given = {"kind": "email", "from": "signoff <approvals@example.com>", "port": port, **settings}
    config = parse_config({"mail": {key: value for key, value in given.items() if value is not None}})["mail"]
    built = build_channel(config)
    assert isinstance(built, EmailChannel)
    return built


def request(store: Store, *, decisions: tuple[str, ...] = ("approve", "edit", "reject")) -> str:
    new = NewRequest(
        thread_id="t1",
        tool_call_id=f"c{next(CALLS)}",
        tool_name="send_email",
        args={"to": "bob@example.com", "body": "<script>alert(1)</script>", "password": "hunter2"},
        description="Mail bob \u202eabc",
        deadline=utcnow() + timedelta(hours=24),
        rule=RequestRule(redact=("password",), allowed_decisions=decisions),  # type: ignore[arg-type]
    )
    return store.create_request(new)[0].id


def header(mail: EmailMessage, name: str) -> str:
    """A header as sent, unfolded (long ids are folded onto a second line, which is allowed)."""
    return str(mail[name]).strip()


def parts(mail: EmailMessage) -> tuple[str, str]:
    plain = mail.get_body(preferencelist=("plain",))
    html = mail.get_body(preferencelist=("html",))
    assert plain is not None and html is not None
    return plain.get_content().replace("\r\n", "\n"), html.get_content().replace("\r\n", "\n")


def test_the_mail_has_headers_both_parts_and_a_link_per_decision(sqlite_store: Store) -> None:
    request_id = request(sqlite_store)
    notice = build_notice(
        sqlite_store.get_request(request_id),
        approver="alice",
        link="http://127.0.0.1:1/h/so_hdl_abc",
        request_url="http://127.0.0.1:1/requests/x",
    )
    with MailServer() as smtp:
        ref = asyncio.run(channel(smtp.port).send(notice, ALICE))
        (got,) = smtp.handler.wait_for(1)
    assert got.recipients == [ALICE]
    assert got.sender == "approvals@example.com"
    assert not got.tls
    mail = got.mail
    assert mail["To"] == ALICE
    assert mail["From"] == "signoff <approvals@example.com>"
    assert mail["Subject"] == "[signoff] AI wants to run: send_email"
    assert re.fullmatch(rf"<{request_id}\.[0-9a-f]{{10}}@signoff\.example\.com>", header(mail, "Message-ID"))
    assert ref == {"message_id": header(mail, "Message-ID"), "subject": mail["Subject"]}
    assert mail["Auto-Submitted"] == "auto-generated"
    assert mail["X-Signoff-Request"] == request_id
    assert mail.get_content_type() == "multipart/alternative"
    plain, html = parts(mail)
    for kind in ("approve", "edit", "reject"):
        assert f"http://127.0.0.1:1/h/so_hdl_abc?decision={kind}" in plain
        assert f'href="http://127.0.0.1:1/h/so_hdl_abc?decision={kind}"' in html
    assert "✅ Approve: http://127.0.0.1:1/h/so_hdl_abc?decision=approve" in plain
    assert "⚠️ Valid for 24 hours" in plain and "⚠️ Valid for 24 hours" in html
    assert "hunter2" not in got.raw.decode(errors="replace")
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<script>alert(1)</script>" in plain
    assert "\u202e" not in plain and "\u202e" not in html
    assert "\\u202e" in plain


def test_the_same_request_and_person_get_the_same_message_id(sqlite_store: Store) -> None:
    notice = build_notice(
        sqlite_store.get_request(request(sqlite_store)), approver="alice", link="http://x/h/1", request_url=""
    )
    with MailServer() as smtp:
        mail = channel(smtp.port)
        first = asyncio.run(mail.send(notice, ALICE))
        again = asyncio.run(mail.send(notice, ALICE))
        other = asyncio.run(mail.send(notice, "carol@example.com"))
        smtp.handler.wait_for(3)
    assert first["message_id"] == again["message_id"] != other["message_id"]


def test_without_a_link_the_mail_says_where_to_sign_in(sqlite_store: Store) -> None:
    notice = build_notice(
        sqlite_store.get_request(request(sqlite_store)),
        approver=None,
        link=None,
        request_url="http://127.0.0.1:1/requests/r1",
        locale="zh",
    )
    with MailServer() as smtp:
        asyncio.run(channel(smtp.port).send(notice, ALICE))
        (got,) = smtp.handler.wait_for(1)
    plain, html = parts(got.mail)
    assert got.mail["Subject"] == "[signoff] AI 想执行：send_email"
    assert "登录后决策：http://127.0.0.1:1/requests/r1" in plain
    assert "?decision=" not in plain and "?decision=" not in html
    assert "⚠️ 24 小时内有效" in plain


def test_the_final_state_and_the_result_are_threaded_under_the_first_mail(sqlite_store: Store) -> None:
    request_id = request(sqlite_store)
    pending = sqlite_store.get_request(request_id)
    with MailServer() as smtp:
        mail = channel(smtp.port)
        first = asyncio.run(
            mail.send(build_notice(pending, approver="alice", link="http://x/h/1", request_url=""), ALICE)
        )
        decided = sqlite_store.decide(request_id, Reject(message="not <b>now</b>"), actor="alice")
        final = build_notice(decided, approver="alice", link=None, request_url="")
        update_ref = asyncio.run(mail.update(final, ALICE, first))
        received = smtp.handler.wait_for(2)
    original, closing = received[0].mail, received[1].mail
    assert header(closing, "In-Reply-To") == header(original, "Message-ID")
    assert header(closing, "References") == header(original, "Message-ID")
    assert header(closing, "Message-ID") != header(original, "Message-ID")
    assert header(closing, "Message-ID").endswith(".final@signoff.example.com>")
    assert update_ref == {
        "message_id": header(closing, "Message-ID"),
        "in_reply_to": header(original, "Message-ID"),
    }
    assert closing["Subject"] == "Re: [signoff] AI wants to run: send_email"
    plain, html = parts(closing)
    assert plain.startswith("❌ Rejected by alice\n")
    assert "Reason: not <b>now</b>" in plain
    assert "not &lt;b&gt;now&lt;/b&gt;" in html
    assert "decision=" not in plain
    assert "decision=" not in html


def test_the_execution_result_follows_in_the_thread(sqlite_store: Store) -> None:
    request_id = request(sqlite_store)
    approved = sqlite_store.decide(request_id, Approve(), actor="alice")
    claim = sqlite_store.claim_execution(
        request_id, args_digest=decided_digest(sqlite_store, request_id), lease=timedelta(minutes=1)
    )
    assert claim.token is not None
    finished = sqlite_store.finish_execution(request_id, claim.token, succeeded=False, error="SMTP 550")
    message = build_follow_up(approved, finished, "en")
    with MailServer() as smtp:
        ref = asyncio.run(
            channel(smtp.port).follow_up(
                message, ALICE, {"message_id": "<first@x>", "subject": "[signoff] s"}
            )
        )
        (got,) = smtp.handler.wait_for(1)
    assert header(got.mail, "In-Reply-To") == "<first@x>"
    assert got.mail["Subject"] == "Re: [signoff] s"
    assert ref is not None and ref["message_id"].endswith(".result@signoff.example.com>")
    plain, _ = parts(got.mail)
    assert "❌ send_email failed: SMTP 550" in plain


def test_starttls_with_a_login(sqlite_store: Store, tmp_path: Path) -> None:
    ca, server_tls = make_certificates(tmp_path)
    notice = build_notice(
        sqlite_store.get_request(request(sqlite_store)), approver="alice", link="http://x/h/1", request_url=""
    )
    logins = {"approvals": "s3cret"}
    with MailServer(tls=server_tls, require_starttls=True, logins=logins) as smtp:
        secure = channel(
            smtp.port, security="starttls", ca_file=str(ca), username="approvals", password="s3cret"
        )
        asyncio.run(secure.send(notice, ALICE))
        (got,) = smtp.handler.wait_for(1)
        assert got.tls
        with pytest.raises(DeliveryError) as plain_refused:
            asyncio.run(channel(smtp.port).send(notice, ALICE))
        assert not plain_refused.value.retry
        assert "530" in plain_refused.value.message
        wrong = channel(
            smtp.port, security="starttls", ca_file=str(ca), username="approvals", password="nope"
        )
        with pytest.raises(DeliveryError, match="login") as bad_login:
            asyncio.run(wrong.send(notice, ALICE))
        assert not bad_login.value.retry
        untrusted = channel(smtp.port, security="starttls", username="approvals", password="s3cret")
        with pytest.raises(DeliveryError, match="TLS"):
            asyncio.run(untrusted.send(notice, ALICE))
    assert len(smtp.handler.received) == 1
    assert "s3cret" not in repr(secure)


def test_smtps_from_the_first_byte(sqlite_store: Store, tmp_path: Path) -> None:
    ca, server_tls = make_certificates(tmp_path)
    notice = build_notice(
        sqlite_store.get_request(request(sqlite_store)), approver="alice", link="http://x/h/1", request_url=""
    )
    with MailServer(implicit_tls=server_tls) as smtp:
        asyncio.run(channel(smtp.port, security="tls", ca_file=str(ca)).send(notice, ALICE))
        (got,) = smtp.handler.wait_for(1)
    assert got.tls
    assert got.mail["To"] == ALICE


def test_smtp_failures_say_whether_to_retry(sqlite_store: Store) -> None:
    notice = build_notice(
        sqlite_store.get_request(request(sqlite_store)), approver="alice", link="http://x/h/1", request_url=""
    )
    with MailServer() as smtp:
        smtp.handler.refuse.add("nobody@example.com")
        with pytest.raises(DeliveryError, match="refused the recipient") as refused:
            asyncio.run(channel(smtp.port).send(notice, "nobody@example.com"))
        assert not refused.value.retry
        port = smtp.port
    with pytest.raises(DeliveryError) as down:
        asyncio.run(channel(port, timeout=2).send(notice, ALICE))
    assert down.value.retry
    with pytest.raises(DeliveryError, match="not a mail address") as bad:
        asyncio.run(channel(port).send(notice, "U123"))
    assert not bad.value.retry


def test_config_is_checked() -> None:
    with pytest.raises(ConfigError, match="from"):
        channel(25, **{"from": "nobody"})
    with pytest.raises(ConfigError, match="security"):
        channel(25, security="ssl3")
    with pytest.raises(ConfigError, match="both"):
        channel(25, username="x")
    with pytest.raises(ConfigError, match="without TLS"):
        channel(25, host="smtp.example.com", username="x", password="y")
    assert channel(None, security="starttls").port == 587
    assert channel(None, security="tls").port == 465
    assert channel(None).port == 25
    described = parse_config({"m": {"kind": "email", "from": "a@b.c", "password": "pw"}})["m"].described()
    assert described["password"] == "***"
