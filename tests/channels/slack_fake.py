"""A fake Slack Web API for tests: a real HTTP server on a loopback port answering the methods
the Slack channel calls (`chat.postMessage`, `chat.update`, `chat.postEphemeral`, `views.open`)
the way Slack documents them, and keeping every call. slack_sdk talks to it with
`base_url=fake.api_url` ("http://127.0.0.1:PORT/api/", trailing slash kept)."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

TOKEN = "xoxb-test-token"


@dataclass
class Call:
    method: str
    body: dict[str, Any]
    headers: dict[str, str]


@dataclass
class FakeSlack:
    token: str = TOKEN
    failures: dict[str, list[str]] = field(default_factory=dict)
    """Per method, errors to answer with (in turn) before working: `{"chat.update": ["ratelimited"]}`."""
    calls: list[Call] = field(default_factory=list)
    changed: threading.Condition = field(default_factory=threading.Condition)
    _server: ThreadingHTTPServer | None = None
    _ts: int = 0

    @property
    def api_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/api/"

    def of(self, method: str) -> list[Call]:
        return [call for call in self.calls if call.method == method]

    def wait_for(self, method: str, count: int = 1, timeout: float = 15.0) -> list[Call]:
        with self.changed:
            self.changed.wait_for(lambda: len(self.of(method)) >= count, timeout)
        calls = self.of(method)
        assert len(calls) >= count, f"{method}: {len(calls)} of {count} calls arrived"
        return calls

    def answer(self, method: str, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        errors = self.failures.get(method)
        if errors:
            error = errors.pop(0)
            if error == "ratelimited":
                return 429, {"ok": False, "error": error}, {"Retry-After": "1"}
            return 200, {"ok": False, "error": error}, {}
        if method == "chat.postMessage":
            self._ts += 1
            channel = str(body.get("channel", ""))
            channel = "D" + channel[1:] if channel.startswith("U") else channel
            ts = f"1700000000.{self._ts:06d}"
            return 200, {"ok": True, "channel": channel, "ts": ts, "message": {"ts": ts}}, {}
        if method == "chat.update":
            return 200, {"ok": True, "channel": body.get("channel"), "ts": body.get("ts")}, {}
        if method == "chat.postEphemeral":
            return 200, {"ok": True, "message_ts": "1700000001.000001"}, {}
        if method == "views.open":
            return 200, {"ok": True, "view": {"id": f"V{len(self.calls)}", **(body.get("view") or {})}}, {}
        return 200, {"ok": False, "error": "unknown_method"}, {}

    def __enter__(self) -> FakeSlack:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                method = self.path.removeprefix("/api/")
                if self.headers.get("content-type", "").startswith("application/json"):
                    body = json.loads(raw or b"{}")
                else:
                    body = {key: values[0] for key, values in parse_qs(raw.decode()).items()}
                if self.headers.get("authorization") != f"Bearer {fake.token}":
                    status, answer, extra = 200, {"ok": False, "error": "invalid_auth"}, {}
                else:
                    with fake.changed:
                        status, answer, extra = fake.answer(method, body)
                with fake.changed:
                    fake.calls.append(Call(method, body, {k.lower(): v for k, v in self.headers.items()}))
                    fake.changed.notify_all()
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json; charset=utf-8")
                self.send_header("content-length", str(len(data)))
                for key, value in extra.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
