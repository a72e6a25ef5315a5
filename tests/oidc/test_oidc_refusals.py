"""Every way a sign-in through the provider can fail is a clear page (not a 500), audited as a
refused sign-in, with nothing created: no person, no session, no binding. Driven by httpx against
the real provider: a tampered ID token, one for another audience (signed by the provider's own
key), a replayed nonce, a replayed or unknown state, a state from another browser, a bad code,
the provider down, the provider's own refusal; and the sign-in limit."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import httpx

from signoff.server.sign_in_limit import SignInLimit

from .conftest import OidcWorld


def _with_query(url: str, **changes: str) -> str:
    parts = urlsplit(url)
    query = {key: values[0] for key, values in parse_qs(parts.query).items()}
    return urlunsplit(parts._replace(query=urlencode({**query, **changes})))


def _query(url: str, name: str) -> str:
    return parse_qs(urlsplit(url).query)[name][0]


def assert_refused(
    world: OidcWorld, answer: httpx.Response, status: int, words: str, *, who: str = "ann", before: int = 0
) -> None:
    """A page saying `words`, audited as a refused sign-in, nothing created for `who` (`before`:
    the sessions and sign-ins others made earlier)."""
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith("text/html")
    assert words in answer.text
    assert 'href="/login/oidc"' in answer.text  # a way to try again
    refused = list(world.store.audit_entries(action="auth.refused"))
    assert refused, "the refused sign-in is audited"
    assert refused[-1].data["reason"].startswith("identity provider: ")
    assert world.store.get_user(who) is None
    assert world.store.oidc_bindings_of(who) == []
    assert len(world.store.list_credentials("session")) == before
    assert len(list(world.store.audit_entries(action="signin.oidc"))) == before


def test_a_tampered_id_token_is_refused(world: OidcWorld) -> None:
    world.provider.token_mode("tamper")
    with world.browser() as client:
        answer = world.sign_in(client, "ann")
    assert_refused(world, answer, 401, "its signature is not the provider")


def test_an_id_token_for_another_audience_is_refused(world: OidcWorld) -> None:
    world.provider.token_mode("audience")
    with world.browser() as client:
        answer = world.sign_in(client, "ann")
    assert_refused(world, answer, 401, "aud")


def test_a_replayed_nonce_is_refused(world: OidcWorld) -> None:
    with world.browser() as client:
        earlier = world.begin(client)
        assert client.get(world.at_provider(client, earlier, "bob")).status_code == 303
    with world.browser() as client:
        # ann's sign-in carries bob's (spent) nonce to the provider: her ID token has it
        replayed = _with_query(world.begin(client), nonce=_query(earlier, "nonce"))
        answer = client.get(world.at_provider(client, replayed, "ann"))
    assert_refused(world, answer, 401, "nonce", before=1)


def test_a_replayed_callback_is_refused(world: OidcWorld) -> None:
    with world.browser() as client:
        callback = world.at_provider(client, world.begin(client), "ann")
        assert client.get(callback).status_code == 303
        again = client.get(callback)
    assert again.status_code == 400
    assert "was already finished" in again.text
    assert len(world.store.list_credentials("session")) == 1
    assert len(list(world.store.audit_entries(action="signin.oidc"))) == 1
    assert list(world.store.audit_entries(action="auth.refused"))


def test_an_unknown_or_mismatched_state_is_refused(world: OidcWorld) -> None:
    with world.browser() as client:
        callback = world.at_provider(client, world.begin(client), "ann")
        answer = client.get(_with_query(callback, state="not-the-state"))
    assert_refused(world, answer, 400, "not started in this browser")


def test_a_callback_in_another_browser_is_refused(world: OidcWorld) -> None:
    with world.browser() as victim, world.browser() as attacker:
        callback = world.at_provider(attacker, world.begin(attacker), "ann")
        answer = victim.get(callback)
    assert_refused(world, answer, 400, "not started in this browser")


def test_an_invalid_code_is_refused_by_the_token_endpoint(world: OidcWorld) -> None:
    with world.browser() as client:
        callback = world.at_provider(client, world.begin(client), "ann")
        answer = client.get(_with_query(callback, code="not-a-code"))
    assert_refused(world, answer, 401, "refused the sign-in")


def test_the_providers_own_refusal_is_shown(world: OidcWorld) -> None:
    with world.browser() as client:
        state = _query(world.begin(client), "state")
        answer = client.get(
            world.url + "/login/oidc/callback?" + urlencode({"state": state, "error": "access_denied"})
        )
    assert_refused(world, answer, 401, "did not sign you in: access_denied")


def test_a_provider_that_is_down_gets_a_page_with_a_retry_link(world: OidcWorld) -> None:
    world.provider.stop()
    with world.browser() as client:
        answer = client.get(world.url + "/login/oidc")
    assert_refused(world, answer, 503, "could not be reached")
    assert "Try signing in again" in answer.text


def test_a_provider_down_at_the_callback_gets_a_page_with_a_retry_link(world: OidcWorld) -> None:
    with world.browser() as client:
        callback = world.at_provider(client, world.begin(client), "ann")
        world.provider.stop()
        answer = client.get(callback)
    assert_refused(world, answer, 503, "could not be reached")


def test_the_sign_in_limit_holds_for_the_provider_too(make_world: Callable[..., OidcWorld]) -> None:
    world = make_world(server={"sign_in_limit": SignInLimit(failures=2, window=600)})
    with world.browser() as client:
        for _ in range(2):
            world.provider.token_mode("tamper")
            assert world.sign_in(client, "ann").status_code == 401
        limited = client.get(world.url + "/login/oidc")
        assert limited.status_code == 429
        assert "too many failed sign-ins" in limited.text
        assert client.get(world.url + "/login/oidc/callback?state=x&code=y").status_code == 429
    assert world.store.get_user("ann") is None
    assert list(world.store.audit_entries(action="auth.limited"))
