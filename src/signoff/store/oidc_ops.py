"""Signing in through an OpenID Connect provider, in the store (DESIGN §13).

The sign-ins under way (state -> nonce and PKCE verifier, spent once), the binding of a
provider's (issuer, subject) to a signoff person, and each sign-in's refresh of the person's
provider-given groups and admin role: one transaction, audited, or refused with nothing changed.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from .._util import utcnow
from ..errors import PermissionDenied
from ..identity import User, valid_user_name
from .core import StoreCore, Tx
from .identity_ops import IdentityOps

if TYPE_CHECKING:
    from ..identity_provider import ProviderPerson

OIDC_SIGN_IN = "signin.oidc"
OIDC_BOUND = "oidc.bound"
FLOW_LIFETIME = timedelta(minutes=10)
"""How long a sign-in may stay at the provider before its state is refused."""


class OidcOps(IdentityOps, StoreCore):
    # -- sign-ins under way -------------------------------------------------------------------

    def begin_oidc_flow(self, state: str, *, nonce: str, code_verifier: str) -> None:
        """Keep a sign-in sent to the provider until its callback (or `FLOW_LIFETIME`)."""
        now = utcnow()
        with self._transaction() as (tx, _):
            tx.run("delete_old_oidc_flows", oldest=now - FLOW_LIFETIME)
            tx.run("insert_oidc_flow", state=state, nonce=nonce, code_verifier=code_verifier, now=now)

    def spend_oidc_flow(self, state: str) -> tuple[str, str] | None:
        """The nonce and PKCE verifier of the sign-in `state` names, the first time only; None for
        an unknown, spent or expired state."""
        now = utcnow()
        with self._transaction() as (tx, _):
            row = tx.one("spend_oidc_flow", state=state, now=now, oldest=now - FLOW_LIFETIME)
        return (str(row["nonce"]), str(row["code_verifier"])) if row is not None else None

    # -- who is who ---------------------------------------------------------------------------

    def sign_in_with_oidc(self, person: ProviderPerson, *, create_people: bool) -> User:
        """The signoff person `person` is, bound to their (issuer, subject) on first sign-in,
        their provider-given groups and admin role replaced by what the provider says now.
        `create_people`: someone the provider vouches for but nobody added becomes a member;
        otherwise only people an admin added (matched by email, then name) may sign in.
        Raises PermissionDenied (nothing changed) for anyone else, a disabled person, an agent."""
        now = utcnow()
        with self._transaction() as (tx, _):
            bound = tx.one("oidc_binding", issuer=person.issuer, subject=person.subject)
            admin_by_provider = bool(bound["admin_by_provider"]) if bound is not None else False
            name = str(bound["user_name"]) if bound is not None else _match(tx, person)
            if name is None:
                if not create_people:
                    raise PermissionDenied(
                        f"{person.label} is not a person of this signoff: ask an admin to add you "
                        "(with your email or name), then sign in again"
                    )
                name = _create(self, tx, person, now=now)
            row = tx.one("get_user", name=name)
            if row is None:
                raise PermissionDenied(f"{name} is no longer a person of this signoff")
            if row["role"] == "agent":
                raise PermissionDenied(f"{name} is an agent: agents do not sign in to the inbox")
            if row["disabled"]:
                raise PermissionDenied(f"{name} is disabled: an admin must enable them first")
            if bound is None:
                _bind(self, tx, person, name, now=now)
            role = str(row["role"])
            new_role = role
            if person.admin and role != "admin":
                new_role, admin_by_provider = "admin", True
            elif not person.admin and admin_by_provider:
                new_role, admin_by_provider = "member", False
            if new_role != role:
                tx.run("update_user", name=name, role=new_role, display_name=None, email=None, disabled=None)
                self._audit(
                    tx,
                    "user.updated",
                    actor=name,
                    channel="web",
                    data={"user": name, "before": {"role": role}, "role": new_role, "by": "oidc"},
                )
            before = [r["group_name"] for r in tx.all("groups_of", user_name=name)]
            given = {r["group_name"] for r in tx.all("oidc_groups_of", user_name=name)}
            wanted = set(person.groups)
            for group in sorted(given - wanted):
                tx.run("remove_member", group_name=group, user_name=name)
                tx.run("remove_oidc_group", user_name=name, group_name=group)
            for group in sorted(wanted - set(before)):
                tx.run("add_member", group_name=group, user_name=name)
                tx.run("add_oidc_group", user_name=name, group_name=group)
            after = [r["group_name"] for r in tx.all("groups_of", user_name=name)]
            tx.run(
                "touch_oidc_binding",
                issuer=person.issuer,
                subject=person.subject,
                admin_by_provider=admin_by_provider,
                now=now,
            )
            data = {
                "iss": person.issuer,
                "sub": person.subject,
                "groups": list(person.provider_groups),
                "signoff_groups": {"before": before, "after": after},
                "role": new_role,
            }
            self._audit(tx, OIDC_SIGN_IN, actor=name, channel="web", data=data)
            tx.run("record_sign_in", user_name=name, method="oidc", now=now)
        user = self.get_user(name)
        assert user is not None
        return user

    def oidc_bindings_of(self, user: str) -> list[dict[str, Any]]:
        """The (issuer, subject) pairs that sign `user` in, with when they last did."""
        with self._read() as tx:
            return tx.all("oidc_bindings_of", user_name=user)

    def first_admin(self) -> str | None:
        """The admin made first (the first start's): the one login links still sign in under
        `signoff serve --oidc-only`."""
        with self._read() as tx:
            row = tx.one("first_admin")
        return str(row["name"]) if row is not None else None


def _match(tx: Tx, person: ProviderPerson) -> str | None:
    """The person an admin added that `person` is: by an email the provider does not call
    unverified (one person only), then by name, but never an admin by name alone (a name claim
    may be chosen by the person it names: "admin" must not become the first admin)."""
    if person.email and person.email_verified is not False:
        named = [str(row["name"]) for row in tx.all("users_with_email", email=person.email)]
        if len(named) > 1:
            raise PermissionDenied(
                f"{len(named)} people of this signoff have the email {person.email}: an admin must "
                "keep it to one of them before they sign in"
            )
        if named:
            return named[0]
    same_name = tx.one("get_user", name=person.name) if person.name else None
    if same_name is not None and same_name["role"] != "admin":
        return str(same_name["name"])
    return None


def _create(store: OidcOps, tx: Tx, person: ProviderPerson, *, now: Any) -> str:
    name = person.name
    if name is None or not valid_user_name(name):
        raise PermissionDenied(
            f"the identity provider names this person {name!r}, which cannot be a signoff name "
            "(letters, digits and . _ @ + -, at most 128): set --oidc-name-claim to another claim"
        )
    email = person.email if person.email_verified is not False else None  # no one else's, unproven
    created = tx.one(
        "insert_user", name=name, role="member", display_name=person.display_name, email=email, now=now
    )
    if created is None:
        raise PermissionDenied(
            f"the name {name} is taken by another person of this signoff: an admin must add you "
            "with your email to sign in as them"
        )
    data = {"user": name, "role": "member", "by": "oidc", "iss": person.issuer, "sub": person.subject}
    store._audit(tx, "user.added", actor=name, channel="web", data=data)
    return name


def _bind(store: OidcOps, tx: Tx, person: ProviderPerson, name: str, *, now: Any) -> None:
    other = tx.one("oidc_binding_at_issuer", issuer=person.issuer, user_name=name)
    if other is not None:
        raise PermissionDenied(
            f"{name} already signs in as another person of this identity provider; "
            f"{person.label} cannot sign in as them"
        )
    bound = tx.run(
        "insert_oidc_binding",
        issuer=person.issuer,
        subject=person.subject,
        user_name=name,
        admin_by_provider=False,
        now=now,
    )
    if bound != 1:
        raise PermissionDenied(f"{person.label} was signing in twice at once: sign in again")
    data = {"user": name, "iss": person.issuer, "sub": person.subject, "email": person.email}
    store._audit(tx, OIDC_BOUND, actor=name, channel="web", data=data)
