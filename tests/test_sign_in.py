"""Tokens expire and failed sign-ins are slowed down (issue 17, item 5).

API tokens get a default and a maximum lifetime, made through the API (a program's token or a
web session's) or the CLI; an expired token is refused like a revoked one. Failed sign-ins (bad
login links, handles, tokens, sessions) are counted per source address: past the limit, its
sign-ins get 429 with Retry-After until the window has room, audited; successes don't count.
Time is the limit's own clock, moved by the tests."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from signoff.cli import app
from signoff.server import ServerSettings
from signoff.server.serve import login_link
from signoff.server.sign_in_limit import SignInLimit, SignInLimiter
from signoff.store import Store
from signoff.token_lifetimes import MAX_TTL_ENV, TTL_ENV, TokenLifetimes

from .conftest import url_for
from .live import LiveServer
from .test_inbox import Person

LIFETIMES = TokenLifetimes(default=timedelta(days=7), maximum=timedelta(days=30))
LIMIT = 3


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def server(store: Store, clock: Clock) -> Iterator[LiveServer]:
    settings = ServerSettings(
        sweep_interval=0.2,
        tokens=LIFETIMES,
        sign_in_limit=SignInLimit(failures=LIMIT, window=60, clock=clock),
    )
    with LiveServer(store, settings) as live:
        yield live


def _alice(server: LiveServer) -> str:
    if server.store.get_user("alice") is None:
        server.store.add_user("alice", actor="test")
    return "alice"


def lifetime(token: dict[str, str]) -> timedelta:
    from signoff._util import from_iso

    return from_iso(token["expires_at"]) - from_iso(token["created_at"])


# -- token lifetimes ------------------------------------------------------------------------------


def test_api_tokens_get_the_default_lifetime_and_never_more_than_the_maximum(server: LiveServer) -> None:
    with server.client(server.user("alice")) as alice:
        plain = alice.post("/v1/tokens", json={"label": "ci"})
        assert plain.status_code == 201, plain.text
        assert lifetime(plain.json()) == timedelta(days=7)
        short = alice.post("/v1/tokens", json={"expires_in": "1d"})
        assert lifetime(short.json()) == timedelta(days=1)
        before = len(alice.get("/v1/tokens").json())
        too_long = alice.post("/v1/tokens", json={"expires_in": "31d"})
        assert too_long.status_code == 422
        assert "a token lives at most 30d here, not 31d" in too_long.json()["error"]["message"]
        assert len(alice.get("/v1/tokens").json()) == before  # nothing made


def test_a_web_session_mints_tokens_that_expire(server: LiveServer) -> None:
    alice = Person(server, "alice")
    try:
        made = alice.client.post("/v1/tokens", json={}, headers={"X-CSRF-Token": alice.csrf})
        assert made.status_code == 201, made.text
        assert lifetime(made.json()) == timedelta(days=7)
    finally:
        alice.close()


def test_an_expired_token_is_refused_like_a_revoked_one(
    server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from signoff._util import utcnow
    from signoff.store import identity_ops

    expiring, _ = server.store.issue_credential("token", _alice(server), ttl=timedelta(hours=1), actor="test")
    revoked, credential = server.store.issue_credential("token", "alice", actor="test")
    server.store.revoke_credential(id=credential.id, actor="test")
    later = utcnow() + timedelta(hours=1, seconds=1)
    monkeypatch.setattr(identity_ops, "utcnow", lambda: later)
    answers = []
    for secret in (expiring, revoked):
        with server.client(secret) as client:
            answer = client.get("/v1/me")
            answers.append((answer.status_code, answer.json()["error"]["message"]))
    assert answers[0] == answers[1] == (401, "the API token is invalid, expired or revoked")


def test_the_cli_makes_tokens_that_expire(store: Store) -> None:
    store.add_user("alice", role="member", actor="test")
    db = url_for(store)
    runner = CliRunner(env={"SIGNOFF_DB": db, "SIGNOFF_URL": None, TTL_ENV: "10d", MAX_TTL_ENV: "20d"})
    assert runner.invoke(app, ["tokens", "create", "--user", "alice"]).exit_code == 0
    assert runner.invoke(app, ["tokens", "create", "--user", "alice", "--expires-in", "2d"]).exit_code == 0
    refused = runner.invoke(app, ["tokens", "create", "--user", "alice", "--expires-in", "21d"])
    assert refused.exit_code == 2
    assert "a token lives at most 20d here, not 21d" in refused.stderr
    made = sorted(
        credential.expires_at - credential.created_at  # type: ignore[operator]
        for credential in store.list_credentials("token")
    )
    assert made == [timedelta(days=2), timedelta(days=10)]
    listed = runner.invoke(app, ["tokens", "list"])
    assert listed.stdout.count("active, expires ") == 2


def test_serve_refuses_a_default_past_the_maximum(tmp_path: Path) -> None:
    runner = CliRunner(env={"SIGNOFF_URL": None})
    db = f"sqlite:///{tmp_path / 'x.db'}"
    result = runner.invoke(app, ["serve", "--db", db, "--token-ttl", "400d", "--port", "1"])
    assert result.exit_code == 2
    assert "longer than its maximum" in result.output


# -- slowing failed sign-ins down -----------------------------------------------------------------


def test_the_limiter_counts_failures_in_a_sliding_window(clock: Clock) -> None:
    limiter = SignInLimiter(SignInLimit(failures=3, window=60, clock=clock))
    for _ in range(2):
        limiter.failed("10.0.0.1")
        clock.now += 10
    assert limiter.check("10.0.0.1") is None  # two failures, and successes are not counted at all
    limiter.failed("10.0.0.1")
    limited = limiter.check("10.0.0.1")
    assert limited is not None
    assert (limited.retry_after, limited.audit) == (40, True)  # until the first failure is 60 s old
    again = limiter.check("10.0.0.1")
    assert again is not None and not again.audit  # audited once a window
    assert limiter.check("10.0.0.2") is None  # per address
    clock.now += 40
    assert limiter.check("10.0.0.1") is None


def test_bad_login_links_are_slowed_down_and_audited(server: LiveServer, clock: Clock) -> None:
    link = login_link(server.store, server.settings, _alice(server))
    token = link.split("token=", 1)[1]
    start = server.store.audit_head_seq()
    with httpx.Client(base_url=server.url) as browser:
        for attempt in range(LIMIT):
            assert browser.post("/login", data={"token": f"so_log_wrong{attempt}"}).status_code == 401
        for page in (
            browser.post("/login", data={"token": token}),
            browser.get("/login", params={"token": token}),
        ):
            assert page.status_code == 429
            assert page.headers["retry-after"] == "60"
            assert "too many failed sign-ins from 127.0.0.1" in page.text
        assert server.store.authenticate(token, "login") is not None  # the good link was not spent
        clock.now += 60
        assert browser.post("/login", data={"token": token}).status_code == 303
    limited = [entry for entry in server.store.audit_entries(after=start) if entry.action == "auth.limited"]
    assert [(entry.actor, entry.data["source"], entry.data["failures"]) for entry in limited] == [
        ("anonymous", "127.0.0.1", LIMIT)
    ]


def test_successes_do_not_count(server: LiveServer) -> None:
    _alice(server)
    with httpx.Client(base_url=server.url) as browser:
        for _ in range(LIMIT * 2):
            link = login_link(server.store, server.settings, "alice")
            assert browser.post("/login", data={"token": link.split("token=", 1)[1]}).status_code == 303
        for _ in range(LIMIT):
            assert browser.post("/login", data={"token": "so_log_wrong"}).status_code == 401
        assert browser.post("/login", data={"token": "so_log_wrong"}).status_code == 429


def test_bad_tokens_and_handles_count_too_and_other_addresses_are_not_slowed(server: LiveServer) -> None:
    good = server.user("alice")
    with server.client("so_tok_wrong") as stranger:
        assert [stranger.get("/v1/me").status_code for _ in range(LIMIT - 1)] == [401] * (LIMIT - 1)
    with httpx.Client(base_url=server.url) as browser:
        assert browser.get("/h/so_hdl_wrong").status_code == 404
        limited = browser.get("/h/so_hdl_other")
        assert limited.status_code == 429
        assert limited.headers["retry-after"] == "60"
    with server.client(good) as alice:  # a good token from the same address waits too
        refused = alice.get("/v1/me")
        assert refused.status_code == 429
        assert refused.headers["retry-after"] == "60"
        assert refused.json()["error"]["type"] == "TooManySignIns"
    other = httpx.HTTPTransport(local_address="127.0.0.2")
    with server.client(good, transport=other) as elsewhere:
        assert elsewhere.get("/v1/me").status_code == 200


def test_an_inbox_page_of_a_slowed_address_says_so(server: LiveServer) -> None:
    alice = Person(server, "alice")
    try:
        with server.client("so_tok_wrong") as stranger:
            for _ in range(LIMIT):
                stranger.get("/v1/me")
        page = alice.client.get("/")
        assert page.status_code == 429
        assert page.headers["retry-after"] == "60"
        assert "Too many failed sign-ins" in page.text
        assert re.search(r"too many failed sign-ins from 127\.0\.0\.1", page.text)
    finally:
        alice.close()
