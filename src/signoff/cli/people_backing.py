"""Where `signoff users`, `signoff groups`, `signoff agents` and `signoff tokens` do their work: on
a server (`--url`: the `Client`'s calls; the server checks, as the token's user, and audits) or on
the database itself (`LocalPeople`: the same `signoff.people_admin` operations the server runs,
as `--as`, with this machine's token lifetimes). Both answer with the API's JSON, so the commands
print the same either way."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Protocol

import typer

from .. import people_admin
from ..errors import ConfigError, InvalidInput
from ..store import Store
from ..token_lifetimes import TokenLifetimes
from .state import CliInputError, acting_user, state_of

JSON = dict[str, Any]


class PeopleFace(Protocol):
    def people(self) -> list[JSON]: ...

    def person(self, name: str) -> JSON: ...

    def add_person(
        self, name: str, *, role: str = ..., display_name: str | None = ..., email: str | None = ...
    ) -> JSON: ...

    def change_person(
        self,
        name: str,
        *,
        role: str | None = ...,
        disabled: bool | None = ...,
        display_name: str | None = ...,
        email: str | None = ...,
    ) -> JSON: ...

    def agents(self) -> list[JSON]: ...

    def create_agent(
        self,
        name: str,
        *,
        display_name: str | None = ...,
        label: str | None = ...,
        expires_in: str | float | None = ...,
    ) -> JSON: ...

    def create_token(
        self, *, user: str | None = ..., label: str | None = ..., expires_in: str | float | None = ...
    ) -> JSON: ...

    def tokens(self) -> list[JSON]: ...

    def revoke_token(self, token_id: str) -> None: ...

    def group_members(self) -> dict[str, list[str]]: ...

    def join_group(self, group: str, user: str) -> None: ...

    def leave_group(self, group: str, user: str) -> None: ...


class LocalPeople:
    """The operations on the database itself, as `actor`."""

    def __init__(self, store: Store, *, actor: str) -> None:
        self.store = store
        self.actor = actor

    def people(self) -> list[JSON]:
        return people_admin.people_views(self.store)

    def person(self, name: str) -> JSON:
        return people_admin.person_view(self.store, name)

    def add_person(
        self, name: str, *, role: str = "member", display_name: str | None = None, email: str | None = None
    ) -> JSON:
        added = people_admin.add_person(
            self.store, name, role=role, display_name=display_name, email=email, actor=self.actor, via="cli"
        )
        return added.to_dict()

    def change_person(
        self,
        name: str,
        *,
        role: str | None = None,
        disabled: bool | None = None,
        display_name: str | None = None,
        email: str | None = None,
    ) -> JSON:
        changed = people_admin.change_person(
            self.store,
            name,
            role=role,
            disabled=disabled,
            display_name=display_name,
            email=email,
            actor=self.actor,
            via="cli",
        )
        return changed.to_dict()

    def agents(self) -> list[JSON]:
        return people_admin.people_views(self.store, role="agent")

    def create_agent(
        self,
        name: str,
        *,
        display_name: str | None = None,
        label: str | None = None,
        expires_in: str | float | None = None,
    ) -> JSON:
        agent, secret, token = people_admin.create_agent(
            self.store,
            name,
            ttl=_lifetime(expires_in),
            display_name=display_name,
            label=label,
            actor=self.actor,
            via="cli",
        )
        return {"agent": agent.to_dict(), "token": {"token": secret, **token}}

    def create_token(
        self, *, user: str | None = None, label: str | None = None, expires_in: str | float | None = None
    ) -> JSON:
        owner = user or self.actor
        secret, token = people_admin.issue_token(
            self.store, owner, ttl=_lifetime(expires_in), label=label, actor=self.actor, via="cli"
        )
        return {"token": secret, **token}

    def tokens(self) -> list[JSON]:
        return [people_admin.token_view(token) for token in self.store.list_credentials("token")]

    def revoke_token(self, token_id: str) -> None:
        people_admin.revoke_token(self.store, token_id, actor=self.actor, via="cli")

    def group_members(self) -> dict[str, list[str]]:
        return people_admin.groups_view(self.store)

    def join_group(self, group: str, user: str) -> None:
        people_admin.add_member(self.store, group, user, actor=self.actor, via="cli")

    def leave_group(self, group: str, user: str) -> None:
        people_admin.remove_member(self.store, group, user, actor=self.actor, via="cli")


def _lifetime(expires_in: str | float | None) -> timedelta:
    try:
        return TokenLifetimes.from_env().lifetime(expires_in)
    except (ConfigError, InvalidInput) as exc:
        raise CliInputError(exc.message) from None


def people_face(ctx: typer.Context, *, as_user: str | None = None) -> PeopleFace:
    """The server's API when the CLI works through one, else the database itself."""
    backing = state_of(ctx).store()
    actor = acting_user(ctx, as_user)
    if isinstance(backing, Store):
        return LocalPeople(backing, actor=actor)
    return backing  # a `Client` (not imported here: a local command loads no HTTP client)
