"""The mails the email channel sends, as `email.message.EmailMessage`s with a plain-text and an
HTML part: a request's notice (with a link button per allowed decision), its final state and the
execution's result, both threaded under the notice (`In-Reply-To` / `References`).

The parts are rendered by Jinja2 as the inbox's pages are: HTML autoescaped, and every value
printed through the inbox's `shown`, so characters a person cannot see (a bidi override, a
zero-width space) are written as escapes in both parts.

Message-IDs are stable: `<{request_id}.{person}@{domain}>` for the notice (`person`: a short hash
of the address, so each approver's mail has its own id), with `.final` and `.result` before the
`@` for what follows it; a mail sent again after a crash keeps its id, so mail clients show it once.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from email.message import EmailMessage
from email.utils import formatdate
from pathlib import Path
from typing import Any

import jinja2

from ..presentation.rendering import shown
from .address_code import AddressCode
from .notice import FollowUp, Notice
from .texts import (
    MAIL_ARGS,
    MAIL_ENDED,
    MAIL_FOOTER,
    MAIL_INTRO,
    MAIL_LINK_NOTE,
    MAIL_QUESTION_INTRO,
    MAIL_REASON,
    MAIL_RESULT,
    MAIL_SIGN_IN,
    MAIL_SUBJECT,
    MAIL_TRUNCATED,
    TITLE,
    Locale,
)

TEMPLATES = Path(__file__).parent / "templates"
COLOURS = {"approve": "#1a7f37", "edit": "#0969da", "respond": "#0969da", "reject": "#cf222e"}
AUTO_HEADERS = {"Auto-Submitted": "auto-generated", "X-Auto-Response-Suppress": "All"}
"""RFC 3834: a machine sent this; out-of-office replies should not answer it."""


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html",), default=False),
        finalize=shown,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
        auto_reload=False,
    )


ENVIRONMENT = _environment()


@dataclass(frozen=True)
class Sender:
    """Who the mails are from and how their Message-IDs are made."""

    address: str
    """The From header: `approvals@example.com` or `signoff <approvals@example.com>`."""
    domain: str
    """The right-hand side of Message-IDs."""


def message_id(request_id: str, target: str, domain: str, part: str = "") -> str:
    person = hashlib.sha256(target.strip().lower().encode()).hexdigest()[:10]
    suffix = f".{part}" if part else ""
    return f"<{request_id}.{person}{suffix}@{domain}>"


def _words(locale: Locale) -> dict[str, str]:
    return {
        "args": MAIL_ARGS[locale],
        "truncated": MAIL_TRUNCATED[locale],
        "link_note": MAIL_LINK_NOTE[locale],
        "reason": MAIL_REASON[locale],
        "ended": MAIL_ENDED[locale],
        "footer": MAIL_FOOTER[locale],
        "result": MAIL_RESULT[locale],
    }


def buttons(notice: Notice) -> list[dict[str, str]]:
    """One link per allowed decision, each to the notice's handle page with a `decision` hint
    (the page opens that decision's form; only pressing its button there decides)."""
    if not notice.link or not notice.open:
        return []
    return [
        {"label": notice.buttons[kind], "url": f"{notice.link}?decision={kind}", "colour": COLOURS[kind]}
        for kind in notice.decisions
    ]


def subject_of(notice: Notice) -> str:
    return MAIL_SUBJECT[notice.locale].format(title=notice.title)


def notice_mail(notice: Notice, sender: Sender, to: str) -> EmailMessage:
    """The mail asking for a decision (or, if the request ended before it went out, saying how)."""
    if notice.final is not None:
        return final_mail(notice, sender, to, parent=None)
    links = buttons(notice)
    context = {
        "intro": MAIL_QUESTION_INTRO[notice.locale] if notice.kind == "input" else MAIL_INTRO[notice.locale],
        "buttons": links,
        "sign_in": MAIL_SIGN_IN[notice.locale].format(url=notice.request_url)
        if notice.request_url and not links
        else None,
        "valid_for": notice.valid_for,
        "four_eyes": notice.four_eyes,
    }
    mail = _mail(notice, sender, to, subject_of(notice), context)
    mail["Message-ID"] = message_id(notice.request_id, to, sender.domain)
    return mail


def reminder_mail(
    notice: Notice, sender: Sender, to: str, parent: dict[str, Any] | None, key: str
) -> EmailMessage:
    """The open request's mail again, its title led by the reminder, threaded under the notice."""
    mail = notice_mail(replace(notice, title=f"{notice.reminder} · {notice.title}"), sender, to)
    mail.replace_header("Subject", _reply_subject(parent, subject_of(notice)))
    mail.replace_header("Message-ID", message_id(notice.request_id, to, sender.domain, f"remind{key}"))
    _thread(mail, parent)
    return mail


def final_mail(notice: Notice, sender: Sender, to: str, parent: dict[str, Any] | None) -> EmailMessage:
    """The mail saying how the request ended, threaded under the notice `parent` names."""
    assert notice.final is not None, "final_mail is for ended requests"
    subject = subject_of(notice)
    mail = _mail(notice, sender, to, _reply_subject(parent, subject), {"final": notice.final})
    mail["Message-ID"] = message_id(notice.request_id, to, sender.domain, "final")
    _thread(mail, parent)
    return mail


def follow_up_mail(message: FollowUp, sender: Sender, to: str, parent: dict[str, Any] | None) -> EmailMessage:
    """The execution's result, threaded under the notice."""
    title = TITLE[message.locale].format(tool=message.tool)
    subject = _reply_subject(parent, MAIL_SUBJECT[message.locale].format(title=title))
    context = {
        "lang": message.locale,
        "subject": subject,
        "title": title,
        "description": "",
        "arg_rows": [],
        "truncated": False,
        "words": _words(message.locale),
        "follow_up": message,
        "final": None,
        "buttons": [],
        "sign_in": None,
        "valid_for": None,
        "four_eyes": None,
        "intro": "",
        "request_url": "",
    }
    mail = _assemble(sender, to, subject, context)
    mail["Message-ID"] = message_id(message.request_id, to, sender.domain, "result")
    _thread(mail, parent)
    return mail


def _mail(notice: Notice, sender: Sender, to: str, subject: str, context: dict[str, Any]) -> EmailMessage:
    full = {
        "lang": notice.locale,
        "subject": subject,
        "title": notice.title,
        "description": notice.description,
        "arg_rows": notice.arg_rows,
        "truncated": notice.truncated,
        "words": _words(notice.locale),
        "request_url": notice.request_url,
        "final": None,
        "follow_up": None,
        "buttons": [],
        "sign_in": None,
        "valid_for": None,
        "four_eyes": None,
        "intro": "",
        **context,
    }
    mail = _assemble(sender, to, subject, full)
    mail["X-Signoff-Request"] = notice.request_id
    return mail


def _assemble(sender: Sender, to: str, subject: str, context: dict[str, Any]) -> EmailMessage:
    mail = EmailMessage()
    mail["From"] = sender.address
    mail["To"] = to
    mail["Subject"] = subject
    mail["Date"] = formatdate(localtime=False, usegmt=True)
    for name, value in AUTO_HEADERS.items():
        mail[name] = value
    mail.set_content(ENVIRONMENT.get_template("mail.txt").render(context))
    mail.add_alternative(ENVIRONMENT.get_template("mail.html").render(context), subtype="html")
    return mail


def _reply_subject(parent: dict[str, Any] | None, subject: str) -> str:
    first = parent.get("subject") if parent else None
    return f"Re: {first if isinstance(first, str) and first else subject}"


def _thread(mail: EmailMessage, parent: dict[str, Any] | None) -> None:
    first = parent.get("message_id") if parent else None
    if isinstance(first, str) and first:
        mail["In-Reply-To"] = first
        mail["References"] = first


def code_mail(message: AddressCode, sender: Sender, to: str) -> EmailMessage:
    """A verification code: plain text, a Message-ID of its own (one per code)."""
    mail = EmailMessage()
    mail["From"] = sender.address
    mail["To"] = to
    mail["Subject"] = MAIL_SUBJECT[message.locale].format(title=message.title)
    mail["Date"] = formatdate(localtime=False, usegmt=True)
    for name, value in AUTO_HEADERS.items():
        mail[name] = value
    mail["Message-ID"] = message_id(f"code.{message.id}", to, sender.domain)
    mail.set_content(message.text)
    return mail
