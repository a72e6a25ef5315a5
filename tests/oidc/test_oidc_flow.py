"""Signing in through a real OpenID provider (npm oidc-provider), driven by httpx: the code flow
with PKCE, state and nonce, the ID token checked, groups mapped, the session started, audited."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

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


def test_the_authorization_request_carries_pkce_state_and_nonce(world: OidcWorld) -> None:
    with world.browser() as client:
        query = parse_qs(urlsplit(world.begin(client)).query)
    assert query["response_type"] == ["code"]
    assert query["code_challenge_method"] == ["S256"]
    assert len(query["code_challenge"][0]) == 43
    assert len(query["state"][0]) >= 32 and len(query["nonce"][0]) >= 32
    assert query["redirect_uri"] == [world.url + "/login/oidc/callback"]
    assert set(query["scope"][0].split()) == {"openid", "profile", "email"}


def test_claims_missing_from_the_id_token_come_from_userinfo(world: OidcWorld) -> None:
    with world.browser() as client:
        assert world.sign_in(client, "ann").status_code == 303
        id_token = client.cookies.get("signoff_oidc_id", domain="127.0.0.1")
    assert id_token is not None
    payload = id_token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert "groups" not in claims  # this provider keeps them for its userinfo endpoint
    ann = world.store.get_user("ann")
    assert ann is not None and ann.groups == ("dba", "staff")


def test_a_session_lives_at_most_the_servers_session_max_age(make_world: Callable[..., OidcWorld]) -> None:
    world = make_world(server={"session_ttl": timedelta(minutes=30)})
    with world.browser() as client:
        answer = world.sign_in(client, "ann")
    assert "Max-Age=1800" in answer.headers["set-cookie"]
    [session] = world.store.list_credentials("session")
    assert session.expires_at is not None
    assert session.expires_at - session.created_at == timedelta(minutes=30)
