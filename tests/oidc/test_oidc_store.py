"""The store's side of signing in through a provider, on SQLite and PostgreSQL: a sign-in under
way is spent once and expires; who-is-who refusals change nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest

from signoff._util import utcnow
from signoff.errors import PermissionDenied
from signoff.identity_provider import ProviderPerson
from signoff.store import Store, oidc_ops

ISSUER = "https://id.example.com"


def test_a_sign_in_under_way_is_spent_once(store: Store) -> None:
    store.begin_oidc_flow("state-1", nonce="nonce-1", code_verifier="verifier-1")
    assert store.spend_oidc_flow("state-1") == ("nonce-1", "verifier-1")
    assert store.spend_oidc_flow("state-1") is None
    assert store.spend_oidc_flow("never-begun") is None


def test_a_sign_in_under_way_expires(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    store.begin_oidc_flow("state-1", nonce="nonce-1", code_verifier="verifier-1")
    later = utcnow() + oidc_ops.FLOW_LIFETIME + timedelta(seconds=1)
    monkeypatch.setattr(oidc_ops, "utcnow", lambda: later)
    assert store.spend_oidc_flow("state-1") is None


def test_refusals_change_nothing(store: Store) -> None:
    ann = ProviderPerson(issuer=ISSUER, subject="s-ann", name="ann", email="ann@example.com", groups=("dba",))
    with pytest.raises(PermissionDenied, match="ask an admin to add you"):
        store.sign_in_with_oidc(ann, create_people=False)
    assert store.get_user("ann") is None
    store.add_user("ann", email="ann@example.com", actor="root")
    store.update_user("ann", disabled=True, actor="root")
    with pytest.raises(PermissionDenied, match="disabled"):
        store.sign_in_with_oidc(ann, create_people=True)
    assert store.oidc_bindings_of("ann") == []
    assert store.groups_of("ann") == []
    store.update_user("ann", disabled=False, actor="root")
    assert store.sign_in_with_oidc(ann, create_people=False).groups == ("dba",)
    other = ProviderPerson(issuer=ISSUER, subject="s-other", name="ann", email="ann@example.com")
    with pytest.raises(PermissionDenied, match="already signs in as another person"):
        store.sign_in_with_oidc(other, create_people=True)
    assert [b["subject"] for b in store.oidc_bindings_of("ann")] == ["s-ann"]
    store.add_user("bot", role="agent", actor="root")
    with pytest.raises(PermissionDenied, match="agent"):
        store.sign_in_with_oidc(
            ProviderPerson(issuer=ISSUER, subject="s-bot", name="bot", email=None), create_people=True
        )
    assert store.oidc_bindings_of("bot") == []


def test_an_unverified_email_matches_nobody(store: Store) -> None:
    store.add_user("annie", email="ann@example.com", actor="root")
    mallory = ProviderPerson(
        issuer=ISSUER, subject="s-m", name="mallory", email="ann@example.com", email_verified=False
    )
    made = store.sign_in_with_oidc(mallory, create_people=True)
    assert (made.name, made.email) == ("mallory", None)  # an unproven email is nobody's
    assert store.oidc_bindings_of("annie") == []
