"""Users and their credentials in the store (DESIGN §8). Secrets are stored as sha256 only."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from .._util import new_id, utcnow
from ..errors import AlreadyExists, Conflict, InvalidInput, NotFound, StoreUnavailable
from ..identity import (
    ROLES,
    Credential,
    CredentialKind,
    Role,
    User,
    kind_of,
    new_secret,
    secret_hash,
    valid_user_name,
)
from .core import StoreCore

log = logging.getLogger("signoff.store")

USE_WRITTEN_EVERY = timedelta(minutes=1)
"""A token's (or session's) `used_at` is written at most this often: a busy agent's calls do not
each write."""


class IdentityOps(StoreCore):
    # -- users --------------------------------------------------------------------------------

    def add_user(
        self,
        name: str,
        *,
        role: Role = "member",
        display_name: str | None = None,
        email: str | None = None,
        actor: str,
        channel: str = "cli",
    ) -> User:
        if not valid_user_name(name):
            raise InvalidInput(
                f"invalid user name {name!r}: use letters, digits and . _ @ + - (at most 128), "
                "not starting with 'group:'"
            )
        if role not in ROLES:
            raise InvalidInput(f"unknown role {role!r}; use one of {', '.join(ROLES)}")
        with self._transaction() as (tx, _):
            row = tx.one(
                "insert_user", name=name, role=role, display_name=display_name, email=email, now=utcnow()
            )
            if row is None:
                raise AlreadyExists(f"user {name!r} already exists")
            added = User(name=name, role=role, display_name=display_name, email=email)
            data = {"user": name, "role": role, "before": None, "after": added.to_dict()}
            self._audit(tx, "user.added", actor=actor, channel=channel, data=data)
        return added

    def get_user(self, name: str) -> User | None:
        with self._read() as tx:
            row = tx.one("get_user", name=name)
        if row is None:
            return None
        return _user(row, tuple(self.groups_of(name)))

    def list_users(self) -> list[User]:
        members: dict[str, list[str]] = {}
        with self._read() as tx:
            memberships = tx.all("list_members")
        for row in memberships:
            group, names = row["group_name"], [row["user_name"]]
            for name in names:
                members.setdefault(name, []).append(group)
        with self._read() as tx:
            rows = tx.all("list_users")
        return [_user(row, tuple(members.get(row["name"], ()))) for row in rows]

    def count_users(self) -> int:
        with self._read() as tx:
            row = tx.one("count_users")
        return int(row["n"]) if row else 0

    def update_user(
        self,
        name: str,
        *,
        role: Role | None = None,
        display_name: str | None = None,
        email: str | None = None,
        disabled: bool | None = None,
        actor: str,
        channel: str = "cli",
        refuse_unchanged: bool = False,
    ) -> User:
        """Change what is given, audited once as `user.updated` with the user `before` and
        `after`. NotFound for no such user; Conflict (and nothing changed) when it would leave no
        enabled admin. When nothing given differs, nothing is written or audited, and with
        `refuse_unchanged` (an admin's change: "twice" is a mistake to say) it is a Conflict;
        without (a sign-in refreshing a name) the user is returned as it is."""
        if role is not None and role not in ROLES:
            raise InvalidInput(f"unknown role {role!r}; use one of {', '.join(ROLES)}")
        wanted = {"role": role, "display_name": display_name, "email": email, "disabled": disabled}
        with self._transaction() as (tx, _):
            row = tx.one("get_user", name=name)
            if row is None:
                raise NotFound(f"no user named {name!r}")
            before = _user(row, ())
            current = before.to_dict()
            changes = {
                key: value for key, value in wanted.items() if value is not None and current[key] != value
            }
            if not changes:
                if refuse_unchanged:
                    raise Conflict(f"{name} is already {_described(before)}: nothing changed")
                return replace(before, groups=tuple(_groups_in(tx, name)))
            stays_admin = changes.get("role", before.role) == "admin" and not changes.get(
                "disabled", before.disabled
            )
            if before.is_admin and not before.disabled and not stays_admin:
                counted = tx.one("count_enabled_admins")
                if counted is None or int(counted["n"]) <= 1:
                    raise Conflict(
                        f"{name} is the last enabled admin: make another person an admin first; "
                        "nothing changed"
                    )
            tx.run(
                "update_user", name=name, role=role, display_name=display_name, email=email, disabled=disabled
            )
            after = _user(tx.one("get_user", name=name) or row, ())
            data = {"user": name, **changes, "before": before.to_dict(), "after": after.to_dict()}
            self._audit(tx, "user.updated", actor=actor, channel=channel, data=data)
        user = self.get_user(name)
        assert user is not None
        return user

    # -- credentials --------------------------------------------------------------------------

    def issue_credential(
        self,
        kind: CredentialKind,
        user: str,
        *,
        ttl: timedelta | None = None,
        label: str | None = None,
        request_id: str | None = None,
        actor: str,
        channel: str = "cli",
    ) -> tuple[str, Credential]:
        """Create a secret for `user` and store its hash. Returns the secret (shown once) and
        the stored record. Sessions also get a CSRF token (`session_of` returns it)."""
        holder = self.get_user(user)
        if holder is None:
            raise InvalidInput(f"no user named {user!r}")
        secret = new_secret(kind)
        now = utcnow()
        credential = Credential(
            id=new_id(kind[:3]),
            kind=kind,
            user_name=user,
            label=label,
            request_id=request_id,
            created_at=now,
            expires_at=now + ttl if ttl is not None else None,
            used_at=None,
            revoked_at=None,
            owner=token_owner(holder, actor) if kind == "token" else None,
        )
        with self._transaction() as (tx, _):
            tx.run(
                "insert_credential",
                owner_name=credential.owner,
                hash=secret_hash(secret),
                id=credential.id,
                kind=kind,
                user_name=user,
                label=label,
                request_id=request_id,
                csrf=new_secret("session")[7:] if kind == "session" else None,
                now=now,
                expires_at=credential.expires_at,
            )
            if kind in ("token", "login"):
                data = {
                    "user": user,
                    "id": credential.id,
                    "label": label,
                    "before": None,
                    "after": credential.to_dict(),
                }
                self._audit(tx, f"{kind}.issued", actor=actor, channel=channel, data=data)
        return secret, credential

    def authenticate(self, secret: str, kind: CredentialKind = "token") -> User | None:
        """The enabled user a live (unexpired, unrevoked) secret of this kind belongs to."""
        found = self._credential_row(secret, kind)
        if found is None:
            return None
        self._note_use(secret, found["used_at"])
        return _user(found, ())

    def authenticate_token(self, secret: str) -> tuple[User, str | None] | None:
        """`authenticate` for an API token, with the token's owner (`Credential.owner`)."""
        found = self._credential_row(secret, "token")
        if found is None:
            return None
        self._note_use(secret, found["used_at"])
        return _user(found, ()), found.get("owner_name")

    def session_of(self, secret: str) -> tuple[User, str] | None:
        """A web session's user and its CSRF token."""
        found = self._credential_row(secret, "session")
        if found is None:
            return None
        self._note_use(secret, found["used_at"])
        return _user(found, ()), str(found["csrf"])

    def handle_of(self, secret: str) -> tuple[User, str] | None:
        """An unexpired handle's user and request id (a handle may be shown many times)."""
        found = self._credential_row(secret, "handle")
        if found is None or found["request_id"] is None:
            return None
        return _user(found, ()), str(found["request_id"])

    def use_login_link(self, secret: str) -> User | None:
        """Spend a one-time login secret: the first use returns its user, any later one None."""
        if kind_of(secret) != "login":
            return None
        with self._transaction() as (tx, _):
            row = tx.one("use_credential", hash=secret_hash(secret), kind="login", now=utcnow())
            if row is None:
                return None
            self._audit(tx, "login.used", actor=row["user_name"], channel="web")
            tx.run("record_sign_in", user_name=row["user_name"], method="link", now=utcnow())
        user = self.get_user(row["user_name"])
        return user if user is not None and not user.disabled else None

    def revoke_credential(
        self, *, id: str | None = None, secret: str | None = None, actor: str, channel: str = "cli"
    ) -> bool:
        with self._transaction() as (tx, _):
            before = tx.one("get_credential", id=id) if id is not None else None
            revoked = tx.run(
                "revoke_credential",
                id=id or "",
                hash=secret_hash(secret) if secret else "",
                now=utcnow(),
            )
            if revoked and id is not None:
                after = tx.one("get_credential", id=id)
                data = {
                    "id": id,
                    "user": before["user_name"] if before else None,
                    "before": _credential(before).to_dict() if before else None,
                    "after": _credential(after).to_dict() if after else None,
                }
                self._audit(tx, "credential.revoked", actor=actor, channel=channel, data=data)
        return revoked > 0

    def list_credentials(self, kind: CredentialKind = "token", user: str | None = None) -> list[Credential]:
        with self._read() as tx:
            rows = tx.all("list_credentials", kind=kind, user_name=user)
        return [_credential(row) for row in rows]

    def get_credential(self, id: str) -> Credential | None:
        with self._read() as tx:
            row = tx.one("get_credential", id=id)
        return _credential(row) if row is not None else None

    def purge_credentials(self) -> int:
        """Delete expired sessions, login links and handles."""
        with self._transaction() as (tx, _):
            return tx.run("delete_dead_credentials", now=utcnow())

    def _note_use(self, secret: str, last: datetime | None) -> None:
        """Write the credential's use unless it was written less than `USE_WRITTEN_EVERY` ago
        (read first: most calls of a busy agent open no write at all). Only a note: a store that
        cannot be written (a full disk, a read-only database) still lets its reads through."""
        now = utcnow()
        if last is not None and last >= now - USE_WRITTEN_EVERY:
            return
        try:
            with self._transaction() as (tx, _):
                tx.run("touch_credential", hash=secret_hash(secret), now=now, since=now - USE_WRITTEN_EVERY)
        except StoreUnavailable as exc:
            log.debug("the use of a credential was not written: %s", exc.message)

    def _credential_row(self, secret: str, kind: CredentialKind) -> dict[str, Any] | None:
        if kind_of(secret) != kind:
            return None
        with self._read() as tx:
            row = tx.one("credential_user", hash=secret_hash(secret), kind=kind, now=utcnow())
        if row is None or row["disabled"]:
            return None
        if kind == "login" and row["used_at"] is not None:
            return None
        return {**row, "name": row["user_name"]}


def _groups_in(tx: Any, name: str) -> list[str]:
    return [row["group_name"] for row in tx.all("groups_of", user_name=name)]


def _described(user: User) -> str:
    return f"{'disabled' if user.disabled else 'enabled'}, {user.role}"


def _user(row: dict[str, Any], groups: tuple[str, ...]) -> User:
    return User(
        name=row["name"],
        role=row["role"],
        display_name=row["display_name"],
        email=row["email"],
        disabled=bool(row["disabled"]),
        groups=groups,
    )


def _credential(row: dict[str, Any]) -> Credential:
    return Credential(
        id=row["id"],
        kind=row["kind"],
        user_name=row["user_name"],
        label=row["label"],
        request_id=row["request_id"],
        created_at=row["created_at"],
        expires_at=row["expires_at"],
        used_at=row["used_at"],
        revoked_at=row["revoked_at"],
        owner=row.get("owner_name"),
    )


def token_owner(holder: User, issuer: str) -> str:
    """Who owns a token issued by `issuer` to `holder`: a person owns their own; an agent's
    belongs to the one who issued it (who answers for what the agent asks)."""
    return issuer if holder.is_agent else holder.name
