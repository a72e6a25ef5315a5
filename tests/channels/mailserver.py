"""A real SMTP server for the email channel's tests (aiosmtpd's `Controller`, in its own thread, on
a free loopback port), optionally with STARTTLS on a certificate made here by a CA made here."""

from __future__ import annotations

import datetime
import email
import email.policy
import ipaddress
import ssl
import threading
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP as SMTPServer
from aiosmtpd.smtp import AuthResult, Envelope, LoginPassword, Session

from ..live import free_port


@dataclass
class Received:
    sender: str
    recipients: list[str]
    raw: bytes
    tls: bool

    @property
    def mail(self) -> EmailMessage:
        parsed = email.message_from_bytes(self.raw, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        return parsed


@dataclass
class Handler:
    refuse: set[str] = field(default_factory=set)
    """Recipients answered 550."""
    received: list[Received] = field(default_factory=list)
    arrived: threading.Condition = field(default_factory=threading.Condition)

    async def handle_RCPT(
        self, server: SMTPServer, session: Session, envelope: Envelope, address: str, options: list[str]
    ) -> str:
        if address in self.refuse:
            return "550 5.1.1 no such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTPServer, session: Session, envelope: Envelope) -> str:
        content = envelope.original_content or b""
        transport = server.transport
        tls = session.ssl is not None or (
            transport is not None and transport.get_extra_info("ssl_object") is not None
        )
        with self.arrived:
            self.received.append(Received(str(envelope.mail_from), list(envelope.rcpt_tos), content, tls))
            self.arrived.notify_all()
        return "250 OK"

    def wait_for(self, count: int, timeout: float = 15.0) -> list[Received]:
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.received) >= count, timeout)
            return list(self.received)


class MailServer:
    """`with MailServer() as smtp:` a server at `smtp.port`; `smtp.handler.received` what came."""

    def __init__(
        self,
        *,
        tls: ssl.SSLContext | None = None,
        require_starttls: bool = False,
        implicit_tls: ssl.SSLContext | None = None,
        logins: dict[str, str] | None = None,
    ) -> None:
        self.handler = Handler()
        self.port = free_port()
        self.logins = logins
        options: dict[str, Any] = {}
        if tls is not None:
            options.update(tls_context=tls, require_starttls=require_starttls)
        if logins is not None:
            options.update(authenticator=self._authenticate, auth_required=True)
        if implicit_tls is not None:
            options.update(ssl_context=implicit_tls)
        self.controller = Controller(self.handler, hostname="127.0.0.1", port=self.port, **options)

    def _authenticate(
        self, server: SMTPServer, session: Session, envelope: Envelope, mechanism: str, data: Any
    ) -> AuthResult:
        if isinstance(data, LoginPassword) and self.logins is not None:
            user, password = data.login.decode(), data.password.decode()
            if self.logins.get(user) == password:
                return AuthResult(success=True)
        return AuthResult(success=False, handled=False)

    def __enter__(self) -> MailServer:
        self.controller.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.controller.stop()


def make_certificates(folder: Path) -> tuple[Path, ssl.SSLContext]:
    """A CA (its certificate's path is returned, for the client to trust) and a server certificate
    for 127.0.0.1 signed by it (in the returned server-side TLS context)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "signoff test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    server = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    ca_path = folder / "ca.pem"
    ca_path.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_path, key_path = folder / "server.pem", folder / "server.key"
    cert_path.write_bytes(server.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_path, key_path)
    return ca_path, context
