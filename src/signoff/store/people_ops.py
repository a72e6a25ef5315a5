"""What the People and Agents admin pages read and change beyond users and credentials
themselves: how and when each person last signed in, when their tokens and sessions were last
used, and an agent made with its first token in one audited step (DESIGN §13)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from .._util import new_id, utcnow
from ..errors import AlreadyExists, InvalidInput
from ..identity import Credential, User, new_secret, secret_hash, valid_user_name
from .core import StoreCore


@dataclass(frozen=True)
class SignIn:
    method: str
    """How: `link` (a login link), `oidc`, ..."""
    at: datetime

    def to_dict(self) -> dict[str, str]:
        return {"method": self.method, "at": self.at.isoformat()}


class PeopleOps(StoreCore):
    def record_sign_in(self, user_name: str, method: str) -> None:
        """Note that `user_name` just signed in by `method` (their last sign-in replaces the one before)."""
        with self._transaction() as (tx, _):
            tx.run("record_sign_in", user_name=user_name, method=method, now=utcnow())

    def last_sign_ins(self) -> dict[str, SignIn]:
        with self._read() as tx:
            rows = tx.all("last_sign_ins")
        return {row["user_name"]: SignIn(row["method"], row["signed_in_at"]) for row in rows}

    def last_uses(self) -> dict[str, datetime]:
        """Each user's newest token or session use (as written: at most a minute late, see `IdentityOps`)."""
        with self._read() as tx:
            rows = tx.all("last_credential_uses")
        return {row["user_name"]: row["used_at"] for row in rows}

    def create_agent(
        self,
        name: str,
        *,
        display_name: str | None = None,
        label: str | None = None,
        ttl: timedelta | None,
        actor: str,
        channel: str = "cli",
    ) -> tuple[User, str, Credential]:
        """A user of role agent and its first API token, audited once as `agent.created`. Returns
        the agent, the token's secret (shown once) and the token's record."""
        if not valid_user_name(name):
            raise InvalidInput(
                f"invalid agent name {name!r}: use letters, digits and . _ @ + - (at most 128), "
                "not starting with 'group:'"
            )
        agent = User(name=name, role="agent", display_name=display_name)
        secret = new_secret("token")
        now = utcnow()
        token = Credential(
            id=new_id("tok"),
            kind="token",
            user_name=name,
            label=label,
            request_id=None,
            created_at=now,
            expires_at=now + ttl if ttl is not None else None,
            used_at=None,
            revoked_at=None,
            owner=actor,
        )
        with self._transaction() as (tx, _):
            row = tx.one(
                "insert_user", name=name, role="agent", display_name=display_name, email=None, now=now
            )
            if row is None:
                raise AlreadyExists(f"user {name!r} already exists")
            tx.run(
                "insert_credential",
                hash=secret_hash(secret),
                id=token.id,
                kind="token",
                user_name=name,
                label=label,
                request_id=None,
                csrf=None,
                now=now,
                expires_at=token.expires_at,
                owner_name=actor,
            )
            after = {**agent.to_dict(), "token": token.to_dict()}
            data = {"user": name, "before": None, "after": after}
            self._audit(tx, "agent.created", actor=actor, channel=channel, data=data)
        return agent, secret, token
