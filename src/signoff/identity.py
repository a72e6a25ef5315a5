"""Who is asking (DESIGN §8): users, their roles, and the secrets they present.

Every secret (API token, web session, one-time login link, card handle) is random, shown once,
and stored only as its sha256. Secrets carry a kind prefix so that a leaked one is recognisable
(`so_tok_…`, `so_ses_…`, `so_log_…`, `so_hdl_…`).

Roles:
- `admin`: sees every request, manages users, tokens and rules; decides only where an approver
  (or where a request names no approvers and has no requester), like everybody else;
- `member`: a person; sees and decides the requests naming them (or a group of theirs);
- `agent`: a program; creates requests, reads and waits on the ones it created, records
  executions. It never decides, except the unattended auto-decision on its own requests.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, get_args

Role = Literal["admin", "member", "agent"]
ROLES: tuple[Role, ...] = get_args(Role)
CredentialKind = Literal["token", "session", "login", "handle"]

SECRET_PREFIX: dict[CredentialKind, str] = {
    "token": "so_tok_",
    "session": "so_ses_",
    "login": "so_log_",
    "handle": "so_hdl_",
}
USER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$")
ADDRESS_KINDS = ("slack", "wecom", "feishu", "email", "recording")
"""The address kinds with their own option; a text chat's is `text:<platform>`, and a channel
kind that a package adds (`signoff.plugins`) is its own address kind while it is installed."""
TEXT_KIND = re.compile(r"^text:[a-z][a-z0-9_-]{0,31}$")


@dataclass(frozen=True, kw_only=True)
class User:
    name: str
    role: Role
    display_name: str | None = None
    email: str | None = None
    disabled: bool = False
    groups: tuple[str, ...] = ()

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    @property
    def is_agent(self) -> bool:
        return self.role == "agent"

    @property
    def label(self) -> str:
        return self.display_name or self.name

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "role": self.role,
            "display_name": self.display_name,
            "email": self.email,
            "disabled": self.disabled,
            "groups": list(self.groups),
        }


def not_a_person(name: str, user: User | None) -> str | None:
    """Why `name` may not decide as a person (None: they may): no such user, an agent, or a
    disabled person. The words every refused decision carries, on the server and locally."""
    if user is None:
        return f"{name} is not a user of this signoff; only its people decide"
    if user.is_agent:
        return f"{name} is an agent; only people decide"
    if user.disabled:
        return f"{name} is disabled; only enabled people decide"
    return None


@dataclass(frozen=True, kw_only=True)
class Credential:
    """A stored credential, without its secret."""

    id: str
    kind: CredentialKind
    user_name: str
    label: str | None
    request_id: str | None
    created_at: datetime
    expires_at: datetime | None
    used_at: datetime | None
    revoked_at: datetime | None
    owner: str | None = None
    """An API token's owner: who holds its secret (a person's own token: them; an agent's: the
    admin who issued it). None for other kinds, and for tokens whose issuer is not known."""

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "kind": self.kind,
            "user": self.user_name,
            "label": self.label,
            "request_id": self.request_id,
            "created_at": self.created_at.isoformat(),
            "expires_at": self.expires_at.isoformat() if self.expires_at else None,
            "used_at": self.used_at.isoformat() if self.used_at else None,
            "revoked": self.revoked_at is not None,
            "owner": self.owner,
        }


def new_secret(kind: CredentialKind) -> str:
    return SECRET_PREFIX[kind] + secrets.token_urlsafe(32)


def secret_hash(secret: str) -> str:
    """What the store keeps of a secret. The secrets are 256 random bits, so a plain sha256
    (no salt, no stretching) cannot be reversed, and it can be looked up by equality."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def kind_of(secret: str) -> CredentialKind | None:
    for kind, prefix in SECRET_PREFIX.items():
        if secret.startswith(prefix):
            return kind
    return None


def valid_user_name(name: str) -> bool:
    return bool(USER_NAME.fullmatch(name)) and not name.startswith("group:")
