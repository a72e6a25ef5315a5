"""A real signoff server (uvicorn, in a thread, on a free loopback port) for tests."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import replace
from typing import Any

import httpx
import uvicorn

from signoff.channels import ChannelRegistry
from signoff.destinations import Destinations
from signoff.identity import Role
from signoff.server import ServerSettings, create_app
from signoff.store import Store


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class LiveServer:
    def __init__(
        self,
        store: Store,
        settings: ServerSettings | None = None,
        *,
        channels: ChannelRegistry | None = None,
        allow_private: bool = True,
        loop: str = "auto",
    ) -> None:
        """`allow_private`: webhooks may go to the tests' receivers on 127.0.0.1 (the server's
        `--allow-private-webhooks`). `loop`: uvicorn's; "asyncio" resolves names through
        `socket.getaddrinfo`, which a test can stand in for (uvloop resolves in C)."""
        self.store = store
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        base = settings or ServerSettings(sweep_interval=0.2)
        self.settings = replace(
            base, base_url=self.url, destinations=Destinations(allow_private=allow_private)
        )
        self.app = create_app(store, self.settings, channels=channels)
        config = uvicorn.Config(
            self.app,
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            ws="none",
            lifespan="on",
            loop=loop,
            timeout_graceful_shutdown=1,
        )
        self.server = uvicorn.Server(config)
        self._clients: list[httpx.Client] = []
        self._thread = threading.Thread(target=self.server.run, name="signoff-test-server", daemon=True)

    def __enter__(self) -> LiveServer:
        self._thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the test server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        for client in self._clients:  # a socket a test left open fails the next test's setup
            client.close()
        self.server.should_exit = True
        self._thread.join(10)

    def user(self, name: str, role: Role = "member", *, groups: tuple[str, ...] = ()) -> str:
        """Make sure `name` exists (with `role`); returns a new API token for them."""
        if self.store.get_user(name) is None:
            self.store.add_user(name, role=role, actor="test")
        for group in groups:
            self.store.add_group_member(group, name, actor="test")
        secret, _ = self.store.issue_credential("token", name, actor="test")
        return secret

    def client(self, token: str | None = None, **kwargs: Any) -> httpx.Client:
        """A client of the server (`token`'s), closed when the server stops if the test has not."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        client = httpx.Client(base_url=self.url, headers=headers, timeout=30, **kwargs)
        self._clients.append(client)
        return client
