"""The ID token's checks, one by one (the flow tests drive them through the real provider; here
each claim is wrong alone): signature, `iss`, `aud`, `exp`, `iat`, `nonce`, `azp`, and a key the
provider rotated in."""

from __future__ import annotations

import time
from typing import Any

import pytest
from joserfc import jwt
from joserfc.jwk import RSAKey

from signoff.server.oidc.client import OidcClient, SignInFailed
from signoff.server.oidc.keys import ProviderKeys
from signoff.server.oidc.settings import OidcSettings

ISSUER = "https://id.example.com"
NONCE = "n-0S6_WzA2Mj"


def _key(kid: str) -> RSAKey:
    return RSAKey.generate_key(2048, parameters={"kid": kid, "use": "sig", "alg": "RS256"})


@pytest.fixture
def published() -> dict[str, Any]:
    return {"keys": [_key("k1")]}


@pytest.fixture
def client(published: dict[str, Any]) -> OidcClient:
    made = OidcClient(
        OidcSettings(issuer=ISSUER, client_id="signoff", client_secret="s"), "https://so.example"
    )
    made.keys = ProviderKeys(lambda: {"keys": [key.as_dict(private=False) for key in published["keys"]]})
    return made


def _token(key: RSAKey, **changes: Any) -> str:
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": "signoff", "sub": "u-1", "exp": now + 300, "iat": now, "nonce": NONCE}
    claims.update(changes)
    claims = {name: value for name, value in claims.items() if value is not None}
    return jwt.encode({"alg": "RS256", "kid": key.kid}, claims, key)


def test_a_good_token_passes(client: OidcClient, published: dict[str, Any]) -> None:
    assert client.id_token_claims(_token(published["keys"][0]), nonce=NONCE)["sub"] == "u-1"


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"iss": "https://evil.example.com"}, "iss"),
        ({"aud": "another-client"}, "aud"),
        ({"exp": int(time.time()) - 3600}, "expired"),
        ({"iat": int(time.time()) + 3600}, "future"),
        ({"nonce": "another-nonce"}, "nonce"),
        ({"nonce": None}, "nonce"),
        ({"aud": ["signoff", "another-client"]}, "another party"),
    ],
)
def test_each_wrong_claim_is_refused(
    client: OidcClient, published: dict[str, Any], changes: dict[str, Any], why: str
) -> None:
    with pytest.raises(SignInFailed, match=why) as refused:
        client.id_token_claims(_token(published["keys"][0], **changes), nonce=NONCE)
    assert refused.value.status == 401


def test_a_token_signed_by_another_key_is_refused(client: OidcClient) -> None:
    with pytest.raises(SignInFailed, match="refused"):
        client.id_token_claims(_token(_key("k1")), nonce=NONCE)  # same kid, not the provider's key


def test_a_rotated_key_is_fetched_once_then_kept(client: OidcClient, published: dict[str, Any]) -> None:
    assert client.id_token_claims(_token(published["keys"][0]), nonce=NONCE)
    assert client.keys.fetches == 1
    rotated = _key("k2")
    published["keys"] = [published["keys"][0], rotated]
    assert client.id_token_claims(_token(rotated), nonce=NONCE)["sub"] == "u-1"
    assert client.id_token_claims(_token(rotated), nonce=NONCE)
    assert client.keys.fetches == 2
    with pytest.raises(SignInFailed):
        client.id_token_claims(_token(_key("k3")), nonce=NONCE)
    assert client.keys.fetches == 3
