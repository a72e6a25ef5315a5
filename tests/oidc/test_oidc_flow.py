"""Signing in through a real OpenID provider (npm oidc-provider), driven by httpx: the code flow
with PKCE, state and nonce, the ID token checked, groups mapped, the session started, audited."""

from __future__ import annotations

from signoff.server.access import SESSION_COOKIE

from .conftest import OidcWorld


def test_a_person_signs_in_through_the_provider(world: OidcWorld) -> None:
    with world.browser() as client:
        answer = world.sign_in(client, "ann")
        assert answer.status_code == 303, answer.text
        assert answer.headers["location"] == "/"
        assert client.cookies.get(SESSION_COOKIE, domain="127.0.0.1")
        inbox = client.get(world.url + "/")
        assert inbox.status_code == 200
        assert "ann" in inbox.text
    ann = world.store.get_user("ann")
    assert ann is not None
    assert ann.email == "ann@example.com"
    assert ann.groups == ("dba", "staff")
    entries = list(world.store.audit_entries(action="signin.oidc"))
    assert [entry.actor for entry in entries] == ["ann"]
    assert entries[0].data["iss"] == world.provider.issuer
    assert entries[0].data["sub"] == "ann"
    assert entries[0].data["groups"] == ["dba", "staff"]
