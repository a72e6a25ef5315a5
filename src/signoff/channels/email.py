"""`email`: requests by mail over SMTP (DESIGN §9), with the standard library's `smtplib` (in a
thread, with its own timeout), so the channel needs no extra package.

    channels:
      mail:
        kind: email
        from: "signoff <approvals@example.com>"
        host: smtp.example.com
        port: 587                 # default: 25, 587 with starttls, 465 with tls
        security: starttls        # none (default), starttls, or tls (SMTPS)
        username: approvals
        password: {env: SMTP_PASSWORD}
        ca_file: /etc/ssl/private-ca.pem    # trust this CA too (a private or self-signed server)
        message_id_domain: signoff.example.com   # default: signoff.<from's domain>

A person's address is their `email` address (`signoff users set-address alice --email a@b.c`).
Each mail has a plain-text and an HTML part; its buttons are links to the person's expiring
handle page (a GET only shows the request; pressing a button there, a POST, decides), so a mail
scanner that fetches every link decides nothing. The final state ("✅ Approved by alice") and the
execution's result come as mails threaded under the first (`In-Reply-To`, `References`), and
every mail's Message-ID is stable (see `email_render`). Mail takes no callbacks.
"""

from __future__ import annotations

import asyncio
import smtplib
import ssl
from email.message import EmailMessage
from email.utils import parseaddr
from typing import Any, Literal

from ..errors import ConfigError
from .address_code import AddressCode
from .contract import Channel, DeliveryError, MessageRef, reminder_key
from .email_render import (
    Sender,
    code_mail,
    final_mail,
    follow_up_mail,
    notice_mail,
    reminder_mail,
    subject_of,
)
from .notice import FollowUp, Notice
from .registry import ChannelConfig

Security = Literal["none", "starttls", "tls"]
SECURITIES: tuple[Security, ...] = ("none", "starttls", "tls")
DEFAULT_PORTS: dict[Security, int] = {"none": 25, "starttls": 587, "tls": 465}


class EmailChannel(Channel):
    kind = "email"

    def __init__(
        self,
        name: str,
        *,
        sender: str,
        host: str = "127.0.0.1",
        port: int | None = None,
        security: Security = "none",
        username: str | None = None,
        password: str | None = None,
        ca_file: str | None = None,
        message_id_domain: str | None = None,
    ) -> None:
        super().__init__(name)
        _, address = parseaddr(sender)
        if "@" not in address:
            raise ConfigError(f"channel {name!r}: 'from' must be a mail address, not {sender!r}")
        if security not in SECURITIES:
            raise ConfigError(f"channel {name!r}: security is one of {', '.join(SECURITIES)}")
        if (username is None) != (password is None):
            raise ConfigError(f"channel {name!r}: give both username and password, or neither")
        if password is not None and security == "none" and host not in ("127.0.0.1", "localhost", "::1"):
            raise ConfigError(
                f"channel {name!r}: a password is not sent to {host} without TLS (security: starttls or tls)"
            )
        domain = message_id_domain or f"signoff.{address.rpartition('@')[2]}"
        self.sender = Sender(address=sender, domain=domain)
        self.host = host
        self.port = port or DEFAULT_PORTS[security]
        self.security: Security = security
        self.username = username
        self._password = password
        self.ca_file = ca_file

    @classmethod
    def from_config(cls, config: ChannelConfig) -> EmailChannel:
        password = config.secret("password") if config.setting("password") else None
        port = config.setting("port")
        try:
            port_number = int(port) if port is not None else None
        except (TypeError, ValueError):
            raise ConfigError(f"channel {config.name!r}: port must be a number") from None
        username = config.setting("username")
        return cls(
            config.name,
            sender=str(config.required("from")),
            host=str(config.setting("host", "127.0.0.1")),
            port=port_number,
            security=config.setting("security", "none"),
            username=str(username) if username is not None else None,
            password=password,
            ca_file=config.setting("ca_file"),
            message_id_domain=config.setting("message_id_domain"),
        )

    # -- the contract ------------------------------------------------------------------------

    async def send(self, notice: Notice, target: str) -> MessageRef:
        mail = notice_mail(notice, self.sender, target)
        await self._deliver(mail, target)
        return {"message_id": mail["Message-ID"], "subject": subject_of(notice)}

    async def update(self, notice: Notice, target: str, ref: MessageRef) -> MessageRef | None:
        if notice.final is None:
            return None
        mail = final_mail(notice, self.sender, target, parent=ref)
        await self._deliver(mail, target)
        return {"message_id": mail["Message-ID"], "in_reply_to": ref.get("message_id")}

    async def follow_up(self, message: FollowUp, target: str, ref: MessageRef) -> MessageRef | None:
        mail = follow_up_mail(message, self.sender, target, parent=ref)
        await self._deliver(mail, target)
        return {"message_id": mail["Message-ID"], "in_reply_to": ref.get("message_id")}

    async def remind(self, notice: Notice, target: str, ref: MessageRef) -> MessageRef | None:
        mail = reminder_mail(notice, self.sender, target, parent=ref, key=reminder_key(notice))
        await self._deliver(mail, target)
        return {"message_id": mail["Message-ID"], "in_reply_to": ref.get("message_id")}

    async def send_code(self, message: AddressCode, target: str) -> MessageRef:
        mail = code_mail(message, self.sender, target)
        await self._deliver(mail, target)
        return {"message_id": mail["Message-ID"]}

    # -- SMTP --------------------------------------------------------------------------------

    async def _deliver(self, mail: EmailMessage, target: str) -> None:
        if "@" not in parseaddr(target)[1]:
            raise DeliveryError(f"{target!r} is not a mail address", retry=False)
        await asyncio.to_thread(self._send_now, mail)

    def _tls(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=self.ca_file)

    def _send_now(self, mail: EmailMessage) -> None:
        try:
            client = self._connect()
            try:
                if self.security == "starttls":
                    client.starttls(context=self._tls())
                    client.ehlo()
                if self.username is not None and self._password is not None:
                    client.login(self.username, self._password)
                client.send_message(mail)
            finally:
                try:
                    client.quit()
                except (smtplib.SMTPException, OSError):
                    client.close()
        except smtplib.SMTPRecipientsRefused as exc:
            raise DeliveryError(
                f"the server refused the recipient: {_first(exc.recipients)}",
                retry=_temporary(exc.recipients),
            ) from None
        except smtplib.SMTPAuthenticationError as exc:
            raise DeliveryError(f"the server refused the login: {exc.smtp_code}", retry=False) from None
        except smtplib.SMTPNotSupportedError as exc:
            raise DeliveryError(f"the server cannot do that: {exc}", retry=False) from None
        except smtplib.SMTPResponseException as exc:
            words = (
                exc.smtp_error.decode(errors="replace")
                if isinstance(exc.smtp_error, bytes)
                else str(exc.smtp_error)
            )
            raise DeliveryError(
                f"the server answered {exc.smtp_code} {words}", retry=exc.smtp_code < 500
            ) from None
        except ssl.SSLError as exc:
            raise DeliveryError(f"TLS failed: {exc.reason or exc}", retry=True) from None
        except (smtplib.SMTPException, OSError) as exc:
            raise DeliveryError(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__) from None

    def _connect(self) -> smtplib.SMTP:
        if self.security == "tls":
            return smtplib.SMTP_SSL(self.host, self.port, timeout=self.timeout, context=self._tls())
        return smtplib.SMTP(self.host, self.port, timeout=self.timeout)


def _first(recipients: dict[str, Any]) -> str:
    for address, (code, words) in recipients.items():
        text = words.decode(errors="replace") if isinstance(words, bytes) else str(words)
        return f"{address}: {code} {text}"
    return "no recipient"


def _temporary(recipients: dict[str, Any]) -> bool:
    return all(int(code) < 500 for code, _ in recipients.values())
