"""A real HTTP receiver for webhook tests: a threaded server on a loopback port that answers
503 for its first `fail` posts, can hold posts until released, and keeps what it got."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    status: int
    path: str = ""
    """The request's target: path and query."""


@dataclass
class Receiver:
    fail: int = 0
    hold: threading.Event | None = None
    """Posts wait for this event before they are answered (a hung receiver)."""
    status: int = 200
    posts: list[Received] = field(default_factory=list)
    arrived: threading.Condition = field(default_factory=threading.Condition)
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/hook"

    @property
    def delivered(self) -> list[Received]:
        """The posts answered 2xx."""
        return [post for post in self.posts if 200 <= post.status < 300]

    def wait_for(self, count: int, timeout: float = 15.0) -> list[Received]:
        """Block until `count` posts were answered 2xx; they are returned."""
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.delivered) >= count, timeout)
        return self.delivered

    def __enter__(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                if receiver.hold is not None:
                    receiver.hold.wait(30)
                with receiver.arrived:
                    status = 503 if receiver.fail > 0 else receiver.status
                    receiver.fail = max(0, receiver.fail - 1)
                    receiver.posts.append(
                        Received({k.lower(): v for k, v in self.headers.items()}, body, status, self.path)
                    )
                    receiver.arrived.notify_all()
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.hold is not None:
            self.hold.set()
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
