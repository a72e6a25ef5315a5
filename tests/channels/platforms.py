"""Local stand-ins for the WeCom and Feishu open APIs: real HTTP servers on loopback ports that
answer as the documented endpoints do and record every call (path, query, JSON body, headers),
so tests can assert what a channel sent, field by field."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit


@dataclass
class Call:
    method: str
    path: str
    query: dict[str, str]
    body: Any
    headers: dict[str, str]


Answer = tuple[int, dict[str, Any]]
Route = Callable[["Call"], Answer]


@dataclass
class FakePlatform:
    """A platform's API on `url`; `routes` maps (method, path) to an answer, `script` queues
    answers that win over the routes once each (a failure, then the usual answer)."""

    routes: dict[tuple[str, str], Route] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    script: dict[tuple[str, str], list[Answer]] = field(default_factory=dict)
    url: str = ""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def called(self, method: str, path: str) -> list[Call]:
        with self._lock:
            return [call for call in self.calls if call.method == method and call.path == path]

    def then(self, method: str, path: str, *answers: Answer) -> None:
        with self._lock:
            self.script.setdefault((method, path), []).extend(answers)

    def _answer(self, call: Call) -> Answer:
        with self._lock:
            self.calls.append(call)
            queued = self.script.get((call.method, call.path))
            if queued:
                return queued.pop(0)
        for (method, pattern), route in self.routes.items():
            if method == call.method and _matches(pattern, call.path):
                return route(call)
        return 404, {"error": f"no route {call.method} {call.path}"}

    def __enter__(self) -> FakePlatform:
        platform = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                call = Call(
                    self.command,
                    parts.path,
                    dict(parse_qsl(parts.query)),
                    body,
                    {key.lower(): value for key, value in self.headers.items()},
                )
                status, answer = platform._answer(call)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json; charset=utf-8")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = _serve

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()


def _matches(pattern: str, path: str) -> bool:
    """`/a/{id}/b` matches `/a/x/b`."""
    wanted, got = pattern.strip("/").split("/"), path.strip("/").split("/")
    return len(wanted) == len(got) and all(
        w == g or (w.startswith("{") and w.endswith("}")) for w, g in zip(wanted, got, strict=True)
    )


def wecom(*, corp_id: str = "wwcorp", secret: str = "corp-secret") -> FakePlatform:
    """qyapi.weixin.qq.com: gettoken, message/send (template cards get a response_code),
    message/update_template_card (each response_code works once)."""
    tokens: Iterator[int] = iter(range(1, 10_000))
    issued: set[str] = set()
    codes: Iterator[int] = iter(range(1, 10_000))
    spent: set[str] = set()

    def gettoken(call: Call) -> Answer:
        if call.query.get("corpid") != corp_id or call.query.get("corpsecret") != secret:
            return 200, {"errcode": 40001, "errmsg": "invalid credential"}
        token = f"wecom-token-{next(tokens)}"
        issued.add(token)
        return 200, {"errcode": 0, "errmsg": "ok", "access_token": token, "expires_in": 7200}

    def authorized(call: Call) -> bool:
        return call.query.get("access_token") in issued

    tasks: set[str] = set()

    def send(call: Call) -> Answer:
        if not authorized(call):
            return 200, {"errcode": 42001, "errmsg": "access_token expired"}
        answer: dict[str, Any] = {
            "errcode": 0,
            "errmsg": "ok",
            "invaliduser": "",
            "msgid": f"msg{len(spent)}",
        }
        if call.body.get("msgtype") == "template_card":
            task = call.body["template_card"].get("task_id")
            if task in tasks:  # WeCom refuses a task_id it has seen (the errcode is this fake's)
                return 200, {"errcode": 40058, "errmsg": "task_id already exists"}
            tasks.add(task)
            answer["response_code"] = f"rc-{next(codes)}"
        return 200, answer

    def update(call: Call) -> Answer:
        if not authorized(call):
            return 200, {"errcode": 42001, "errmsg": "access_token expired"}
        code = call.body.get("response_code")
        if code in spent:
            return 200, {"errcode": 40148, "errmsg": "response_code already used"}
        spent.add(code)
        return 200, {"errcode": 0, "errmsg": "ok"}

    return FakePlatform(
        routes={
            ("GET", "/cgi-bin/gettoken"): gettoken,
            ("POST", "/cgi-bin/message/send"): send,
            ("POST", "/cgi-bin/message/update_template_card"): update,
        }
    )


def feishu(*, app_id: str, app_secret: str = "app-secret") -> FakePlatform:
    """open.feishu.cn: tenant_access_token/internal, im/v1/messages (create, patch, reply)."""
    counter: Iterator[int] = iter(range(1, 10_000))
    issued: set[str] = set()

    def token(call: Call) -> Answer:
        if call.body != {"app_id": app_id, "app_secret": app_secret}:
            return 400, {"code": 10014, "msg": "app secret invalid"}
        value = f"t-{next(counter)}"
        issued.add(value)
        return 200, {"code": 0, "msg": "ok", "tenant_access_token": value, "expire": 7200}

    def authorized(call: Call) -> bool:
        return call.headers.get("authorization", "").removeprefix("Bearer ") in issued

    def create(call: Call) -> Answer:
        if not authorized(call):
            return 401, {"code": 99991663, "msg": "Invalid access token for authorization."}
        message = f"om_{next(counter)}"
        return 200, {"code": 0, "msg": "success", "data": {"message_id": message, "msg_type": "interactive"}}

    def patch(call: Call) -> Answer:
        if not authorized(call):
            return 401, {"code": 99991663, "msg": "Invalid access token for authorization."}
        return 200, {"code": 0, "msg": "success", "data": {}}

    def reply(call: Call) -> Answer:
        if not authorized(call):
            return 401, {"code": 99991663, "msg": "Invalid access token for authorization."}
        return 200, {"code": 0, "msg": "success", "data": {"message_id": f"om_{next(counter)}"}}

    return FakePlatform(
        routes={
            ("POST", "/open-apis/auth/v3/tenant_access_token/internal"): token,
            ("POST", "/open-apis/im/v1/messages"): create,
            ("PATCH", "/open-apis/im/v1/messages/{id}"): patch,
            ("POST", "/open-apis/im/v1/messages/{id}/reply"): reply,
        }
    )
