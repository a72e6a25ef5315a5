"""Administering a server's people, groups, agents and tokens through its API (admins): what
`signoff users`, `signoff groups`, `signoff agents` and `signoff tokens` call with `--url`. Each
answer is the API's JSON as it is (a token's secret only once, when it is made)."""

from __future__ import annotations

from typing import Any, TypeVar

from ._channel_admin import _call
from ._wire import Call

T = TypeVar("T")
JSON = dict[str, Any]


def _given(**fields: Any) -> JSON:
    return {key: value for key, value in fields.items() if value is not None}


class PeopleAdminCalls:
    """The people, groups, agents and tokens administration calls of `Client`."""

    def _send(self, call: Call[T]) -> T:
        raise NotImplementedError

    def people(self) -> list[JSON]:
        """Every user, with sign-in, last seen and addresses (admins)."""
        found: list[JSON] = self._send(_call("GET", "users"))
        return found

    def person(self, name: str) -> JSON:
        """One user with their tokens, requests and decisions (admins)."""
        found: JSON = self._send(_call("GET", "users", name))
        return found

    def add_person(
        self, name: str, *, role: str = "member", display_name: str | None = None, email: str | None = None
    ) -> JSON:
        body = _given(name=name, role=role, display_name=display_name, email=email)
        added: JSON = self._send(_call("POST", "users", body=body))
        return added

    def change_person(
        self,
        name: str,
        *,
        role: str | None = None,
        disabled: bool | None = None,
        display_name: str | None = None,
        email: str | None = None,
    ) -> JSON:
        """Change what is given (admins); 409 when nothing differs or no enabled admin would be left."""
        body = _given(role=role, disabled=disabled, display_name=display_name, email=email)
        changed: JSON = self._send(_call("PATCH", "users", name, body=body))
        return changed

    def agents(self) -> list[JSON]:
        found: list[JSON] = self._send(_call("GET", "agents"))
        return found

    def create_agent(
        self,
        name: str,
        *,
        display_name: str | None = None,
        label: str | None = None,
        expires_in: str | float | None = None,
    ) -> JSON:
        """An agent and its first token: `{"agent": ..., "token": {"token": SECRET, ...}}`."""
        body = _given(name=name, display_name=display_name, label=label, expires_in=expires_in)
        made: JSON = self._send(_call("POST", "agents", body=body))
        return made

    def create_token(
        self, *, user: str | None = None, label: str | None = None, expires_in: str | float | None = None
    ) -> JSON:
        """A token (for yourself, or as an admin anyone's): its secret is in `token`, this once."""
        made: JSON = self._send(
            _call("POST", "tokens", body=_given(user=user, label=label, expires_in=expires_in))
        )
        return made

    def tokens(self) -> list[JSON]:
        """Your tokens (admins: everyone's), without their secrets."""
        found: list[JSON] = self._send(_call("GET", "tokens"))
        return found

    def revoke_token(self, token_id: str) -> None:
        self._send(_call("DELETE", "tokens", token_id))

    def join_group(self, group: str, user: str) -> None:
        """Put `user` in `group` (admins; 409 if they already are)."""
        self._send(_call("POST", "groups", group, "members", body={"user": user}))

    def leave_group(self, group: str, user: str) -> None:
        """Take `user` out of `group` (admins; 409 if they are not in it)."""
        self._send(_call("DELETE", "groups", group, "members", user))
