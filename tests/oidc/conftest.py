"""A real OpenID provider for the sign-in tests: the npm oidc-provider (tests/oidc/provider.mjs,
pinned by package-lock.json; `npm ci` here installs it), started on a free loopback port for a
test and stopped after it, in front of a real signoff server."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import httpx
import pytest

from signoff.server import ServerSettings
from signoff.server.oidc.settings import OidcSettings
from signoff.store import Store

from ..live import LiveServer

HERE = Path(__file__).parent
CLIENT_ID = "signoff-test"
CLIENT_SECRET = "signoff-test-secret"
ACCOUNTS: dict[str, dict[str, Any]] = {
    "ann": {
        "preferred_username": "ann",
        "email": "ann@example.com",
        "email_verified": True,
        "name": "Ann Example",
        "groups": ["dba", "staff"],
    },
    "bob": {
        "preferred_username": "bob",
        "email": "bob@example.com",
        "email_verified": True,
        "name": "Bob Example",
        "groups": ["staff"],
    },
}


class Provider:
    """The provider process, and the test's levers on it."""

    def __init__(self, *, accounts: dict[str, dict[str, Any]] | None = None) -> None:
        if shutil.which("node") is None:
            pytest.skip("the OIDC tests need Node.js (node) for the npm oidc-provider")
        if not (HERE / "node_modules" / "oidc-provider").is_dir():
            pytest.skip("the OIDC tests need the npm oidc-provider: run `npm ci` in tests/oidc")
        self.issuer = ""
        self.accounts = accounts or ACCOUNTS
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> Provider:
        """Start it on a port of its choosing (its issuer); `register` opens it."""
        env = {
            **os.environ,
            "CLIENT_ID": CLIENT_ID,
            "CLIENT_SECRET": CLIENT_SECRET,
            "ACCOUNTS": json.dumps(self.accounts),
        }
        self.process = subprocess.Popen(
            ["node", str(HERE / "provider.mjs")],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the OpenID provider did not start")
        self.issuer = json.loads(line)["issuer"]
        return self

    def register(self, signoff_url: str) -> None:
        """Register the client of the signoff server at `signoff_url` (its redirect URIs)."""
        client = {
            "redirect_uris": [signoff_url + "/login/oidc/callback"],
            "post_logout_redirect_uris": [signoff_url + "/login?signed_out=1"],
        }
        httpx.post(f"{self.issuer}/test/client", json=client).raise_for_status()

    def stop(self) -> None:
        if self.process is not None:
            if self.process.poll() is None:
                self.process.terminate()
                self.process.wait(10)
            if self.process.stdout is not None:
                self.process.stdout.close()
        self.process = None

    def set_claims(self, sub: str, **claims: Any) -> None:
        """Change a person at the provider (e.g. their groups)."""
        answer = httpx.put(f"{self.issuer}/test/accounts/{sub}", json={**self.accounts[sub], **claims})
        answer.raise_for_status()

    def token_mode(self, mode: str) -> None:
        """The next token response's ID token: "tamper" (edited, not signed again) or
        "audience" (signed again by the provider for another audience)."""
        httpx.post(f"{self.issuer}/test/token-mode", json={"mode": mode}).raise_for_status()


def oidc_settings(issuer: str, **changes: Any) -> OidcSettings:
    return replace(
        OidcSettings(issuer=issuer, client_id=CLIENT_ID, client_secret=CLIENT_SECRET, create_people=True),
        **changes,
    )


class OidcWorld:
    """A signoff server signing people in through a running provider."""

    def __init__(self, store: Store, server: dict[str, Any] | None = None, **oidc: Any) -> None:
        """Starts the provider (stop it with `close`); the signoff server is started by `open`."""
        self.store = store
        self.provider = Provider().start()
        try:
            oidc_options = oidc_settings(self.provider.issuer, **oidc)
            self.live = LiveServer(
                store, ServerSettings(sweep_interval=0.2, oidc=oidc_options, **(server or {}))
            )
            self.provider.register(self.live.url)
        except BaseException:
            self.provider.stop()
            raise

    def open(self) -> OidcWorld:
        self.live.__enter__()
        return self

    def close(self) -> None:
        self.live.__exit__(None, None, None)
        self.provider.stop()

    @property
    def url(self) -> str:
        return self.live.url

    def browser(self) -> httpx.Client:
        """A client keeping cookies like a browser (the provider's and signoff's), not following
        redirects by itself."""
        return httpx.Client(timeout=30)

    def begin(self, client: httpx.Client) -> str:
        """Start a sign-in at signoff: the provider's authorization URL it sends to."""
        answer = client.get(self.url + "/login/oidc")
        assert answer.status_code == 303, answer.text
        location = answer.headers["location"]
        assert location.startswith(self.provider.issuer + "/auth?")
        return location

    def at_provider(self, client: httpx.Client, authorization_url: str, login: str) -> str:
        """Sign in at the provider's login form as `login`: the callback URL it sends back to."""
        return provider_login(client, authorization_url, login, back_to=self.url + "/login/oidc/callback")

    def ask(self, call_id: str, approvers: list[str]) -> str:
        """An agent's request for `drop_table`, decided by `approvers`: its id."""
        if self.store.get_user("bot") is None:
            self.store.add_user("bot", role="agent", actor="test")
        token, _ = self.store.issue_credential("token", "bot", actor="test")
        body = {"thread_id": "t1", "tool_call_id": call_id, "tool": "drop_table", "args": {"table": call_id}}
        answer = httpx.post(
            self.url + "/v1/requests",
            json={**body, "approvers": approvers},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert answer.status_code == 201, answer.text
        request_id: str = answer.json()["id"]
        return request_id

    def csrf(self, client: httpx.Client) -> str:
        """The CSRF token of the client's session (from the inbox page)."""
        found = re.search(r'name="csrf_token" value="([^"]+)"', client.get(self.url + "/").text)
        assert found is not None
        return found.group(1)

    def sign_in(self, client: httpx.Client, login: str) -> httpx.Response:
        """The whole flow; signoff's answer to the callback."""
        callback = self.at_provider(client, self.begin(client), login)
        return client.get(callback)


def provider_login(client: httpx.Client, authorization_url: str, login: str, *, back_to: str) -> str:
    """Sign in at the provider's login form (devInteractions: any password) as `login`, with the
    cookies of `client`; the URL the provider sends the browser back to (starting `back_to`)."""
    url, method, data = authorization_url, "GET", None
    for _ in range(12):
        answer = client.request(method, url, data=data)
        if answer.is_redirect:
            url, method, data = urljoin(url, answer.headers["location"]), "GET", None
            if url.startswith(back_to):
                return url
            continue
        action = re.search(r'<form[^>]*action="([^"]+)"', answer.text)
        assert action is not None, answer.text
        url, method = urljoin(url, action.group(1)), "POST"
        data = {"prompt": "login", "login": login, "password": "any"}
    raise AssertionError("the provider never sent the browser back")


@pytest.fixture
def make_world(store: Store) -> Iterator[Callable[..., OidcWorld]]:
    """Start a provider and a signoff server using it (with these OIDC settings)."""
    worlds: list[OidcWorld] = []

    def make(server: dict[str, Any] | None = None, **oidc: Any) -> OidcWorld:
        world = OidcWorld(store, server, **oidc)
        worlds.append(world)
        return world.open()

    yield make
    for world in worlds:
        world.close()


@pytest.fixture
def world(make_world: Callable[..., OidcWorld]) -> OidcWorld:
    return make_world()
