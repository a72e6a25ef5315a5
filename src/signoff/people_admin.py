"""Administering people, groups, agents and tokens: the one implementation the API, the inbox's
admin pages (`/admin/people`, `/admin/agents`) and the CLI (on a database; through a server it
calls the API) all call (DESIGN §13).

Each change is one audit entry with before and after (the store writes it, in the change's own
transaction). Bad input changes nothing and says why: an unknown person or token is NotFound, a
bad role or name InvalidInput, a change that is already so (disabling a disabled person, adding
a member twice, revoking a revoked token) Conflict, and so is taking the last enabled admin's
admin role away (or disabling them). Who may call these is the caller's to check (admins only:
`require_admin` in the API and the pages; the CLI on a database acts as `--as`).

What a person's page shows is read here too (`people_views`, `person_view`): role, groups, how
and when they last signed in, when they were last seen (the newest sign-in or token or session
use), their channel addresses, their tokens, and what they asked (agents) and decided (people).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from ._util import utcnow
from .errors import Conflict, InvalidInput, NotFound
from .identity import ROLES, Credential, Role, User
from .store import Store

RECENT = 50
"""How many of a person's requests and decisions their page lists (newest first)."""


# -- reading -------------------------------------------------------------------------------------


def people_views(store: Store, *, role: str | None = None) -> list[dict[str, Any]]:
    """Every user (or those of `role`), with sign-in, last seen and addresses."""
    sign_ins, uses = store.last_sign_ins(), store.last_uses()
    return [
        _row(store, user, sign_ins, uses)
        for user in store.list_users()
        if role is None or (user.role == "agent") == (role == "agent")
    ]


def person_view(store: Store, name: str) -> dict[str, Any]:
    """One user as their page shows them: the list's row, their tokens (never the secrets), the
    identity provider's (issuer, subject) pairs that sign them in, the requests they asked (newest
    first), those waiting in their inbox (people) and the decisions they made."""
    user = known_user(store, name)
    view = _row(store, user, store.last_sign_ins(), store.last_uses())
    view["tokens"] = [token_view(token) for token in store.list_credentials("token", name)]
    view["identities"] = [
        {
            "issuer": bound["issuer"],
            "subject": bound["subject"],
            "signed_in_at": bound["signed_in_at"].isoformat(),
        }
        for bound in store.oidc_bindings_of(name)
    ]
    view["requests"] = [_asked(request) for request in store.list_requests(created_by=name, limit=RECENT)]
    waiting = [] if user.is_agent else store.list_requests(visible_to=name, status="pending", limit=RECENT)
    view["waiting"] = [_asked(request) for request in waiting]
    decided = store.audit_entries(actor=name, action="request.decided", newest_first=True, batch=RECENT)
    view["decisions"] = [
        {"request_id": entry.request_id, "type": entry.data.get("type"), "at": entry.at}
        for entry, _ in zip(decided, range(RECENT), strict=False)
    ]
    return view


def groups_view(store: Store) -> dict[str, list[str]]:
    return {group: sorted(members) for group, members in sorted(store.group_members().items())}


def token_view(token: Credential) -> dict[str, Any]:
    now = utcnow()
    expired = token.expires_at is not None and token.expires_at <= now
    state = "revoked" if token.revoked_at else "expired" if expired else "active"
    return {**token.to_dict(), "state": state}


def known_user(store: Store, name: str) -> User:
    user = store.get_user(name)
    if user is None:
        raise NotFound(f"no user named {name!r}")
    return user


def _row(store: Store, user: User, sign_ins: dict[str, Any], uses: dict[str, datetime]) -> dict[str, Any]:
    sign_in = sign_ins.get(user.name)
    seen = [moment for moment in (sign_in.at if sign_in else None, uses.get(user.name)) if moment]
    addresses = [
        {"kind": state.kind, "address": state.address, "verified": state.verified}
        for state in store.address_states(user.name)
    ]
    return {
        **user.to_dict(),
        "sign_in": sign_in.to_dict() if sign_in else None,
        "last_seen": max(seen).isoformat() if seen else None,
        "addresses": addresses,
    }


def _asked(request: Any) -> dict[str, Any]:
    decision = request.decision
    return {
        "id": request.id,
        "tool": request.tool_name,
        "status": request.status,
        "created_at": request.created_at.isoformat(),
        "decided_by": decision.actor if decision is not None else None,
        "decided_at": request.decided_at.isoformat() if request.decided_at else None,
    }


# -- changing ------------------------------------------------------------------------------------


def check_role(role: str) -> Role:
    if role not in ROLES:
        raise InvalidInput(f"unknown role {role!r}; use one of {', '.join(ROLES)}")
    return role


def add_person(
    store: Store,
    name: str,
    *,
    role: str = "member",
    display_name: str | None = None,
    email: str | None = None,
    actor: str,
    via: str,
) -> User:
    return store.add_user(
        name.strip(),
        role=check_role(role),
        display_name=display_name or None,
        email=email or None,
        actor=actor,
        channel=via,
    )


def change_person(
    store: Store,
    name: str,
    *,
    role: str | None = None,
    disabled: bool | None = None,
    display_name: str | None = None,
    email: str | None = None,
    actor: str,
    via: str,
) -> User:
    """Change a user's role, disabled flag, display name or email (what is given)."""
    checked = check_role(role) if role is not None else None
    return store.update_user(
        name,
        role=checked,
        disabled=disabled,
        display_name=display_name,
        email=email,
        actor=actor,
        channel=via,
        refuse_unchanged=True,
    )


def add_member(store: Store, group: str, user: str, *, actor: str, via: str) -> dict[str, list[str]]:
    """Put `user` in `group` (a new group starts with them); the groups after. In a store that
    has users, `user` must be one of them (a store without users names people freely, as the
    local CLI's `--as` does)."""
    name = group_name(group)
    if store.count_users():
        known_user(store, user)
    if not store.add_group_member(name, user, actor=actor, channel=via):
        raise Conflict(f"{user} is already in group {name}: nothing changed")
    return groups_view(store)


def remove_member(store: Store, group: str, user: str, *, actor: str, via: str) -> dict[str, list[str]]:
    name = group_name(group)
    if not store.remove_group_member(name, user, actor=actor, channel=via):
        raise Conflict(f"{user} is not in group {name}: nothing changed")
    return groups_view(store)


def group_name(group: str) -> str:
    name = group.strip().removeprefix("group:")
    if not name or any(not (char.isalnum() or char in "._-") for char in name) or len(name) > 128:
        raise InvalidInput(f"invalid group name {group!r}: use letters, digits and . _ -")
    return name


def create_agent(
    store: Store,
    name: str,
    *,
    ttl: timedelta,
    display_name: str | None = None,
    label: str | None = None,
    actor: str,
    via: str,
) -> tuple[User, str, dict[str, Any]]:
    """An agent and its first token (its secret returned this once), audited once."""
    agent, secret, token = store.create_agent(
        name.strip(),
        display_name=display_name or None,
        label=label or None,
        ttl=ttl,
        actor=actor,
        channel=via,
    )
    return agent, secret, token_view(token)


def issue_token(
    store: Store, user: str, *, ttl: timedelta, label: str | None = None, actor: str, via: str
) -> tuple[str, dict[str, Any]]:
    known_user(store, user)
    secret, token = store.issue_credential(
        "token", user, ttl=ttl, label=label or None, actor=actor, channel=via
    )
    return secret, token_view(token)


def revoke_token(store: Store, token_id: str, *, actor: str, via: str) -> dict[str, Any]:
    """Revoke an API token; the token after."""
    token = known_token(store, token_id)
    if token.revoked_at is not None:
        raise Conflict(f"token {token_id} is already revoked: nothing changed")
    if not store.revoke_credential(id=token_id, actor=actor, channel=via):
        raise Conflict(f"token {token_id} was revoked meanwhile: nothing changed")
    return token_view(known_token(store, token_id))


def known_token(store: Store, token_id: str) -> Credential:
    token = store.get_credential(token_id)
    if token is None or token.kind != "token":
        raise NotFound(f"no token {token_id!r}")
    return token
