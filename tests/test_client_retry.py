"""The remote client under a flaky world: transient failures are ridden out with backoff (writes
keeping their Idempotency-Key), nothing else is retried, a gate waits out server restarts, an
answer lost after the server applied a write does no harm, and the event stream's reconnect
delay starts over once a stream is established."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import httpx
import pytest

from signoff import (
    AlreadyDecided,
    Approve,
    AsyncClient,
    Client,
    ExecutionStatus,
    Gate,
    NotAuthenticated,
    RemoteError,
    RequestNotFound,
    RuleSet,
    Scope,
    ServerUnavailable,
    Store,
    ToolCall,
)
from signoff.client import _retry
from signoff.client._events import EventFollower
from signoff.client._servers import Servers
from signoff.errors import InvalidInput
from signoff.store import SQLiteStore
from signoff.store.wakeup import WakeupHub
from tests.conftest import AGENT_USER
from tests.helpers import person_deciding
from tests.live import LiveServer

RULES = RuleSet.from_yaml("tools: {deploy: {requires_approval: true, approvers: [alice]}}")
PUSH_ONLY = 3600.0
STORE_DOWN = {"error": {"type": "StoreUnavailable", "message": "the database is full"}}


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_retry, "FIRST_DELAY", 0.01)
    monkeypatch.setattr(_retry, "MAX_DELAY", 0.05)


class Script:
    """A server that answers each call with the next of `answers` (an exception is raised as the
    transport's), then with `then`; it keeps every request it was sent."""

    def __init__(self, answers: list[Any], then: Callable[[httpx.Request], httpx.Response]) -> None:
        self.answers = list(answers)
        self.then = then
        self.sent: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request)
        if not self.answers:
            return self.then(request)
        answer = self.answers.pop(0)
        if isinstance(answer, type) and issubclass(answer, httpx.TransportError):
            raise answer("injected", request=request)
        status, body = answer
        return (
            httpx.Response(status, json=body) if isinstance(body, dict) else httpx.Response(status, text=body)
        )


TRANSIENT = [
    httpx.ConnectError,
    (503, STORE_DOWN),
    (502, "<html>Bad Gateway</html>"),
    (504, "<html>Gateway Timeout</html>"),
    httpx.ReadTimeout,
    httpx.RemoteProtocolError,
]


def memory_answers(request: httpx.Request) -> httpx.Response:
    if request.method == "POST":
        return httpx.Response(204)
    return httpx.Response(200, json={"remembered": True})


def test_transient_failures_are_ridden_out_and_a_write_keeps_its_idempotency_key() -> None:
    script = Script(TRANSIENT, memory_answers)
    with Client("http://signoff.test", "so_tok_x", transport=httpx.MockTransport(script)) as client:
        client.remember("scope", "fingerprint")
        first = [request.headers.get("idempotency-key") for request in script.sent]
        client.remember("scope", "fingerprint")
        second = script.sent[-1].headers.get("idempotency-key")
        script.answers = list(TRANSIENT)
        assert client.recall("scope", "fingerprint") is True
    assert len(first) == len(TRANSIENT) + 1, "every transient failure was retried"
    assert first[0] is not None and set(first) == {first[0]}, "one key for all attempts of one call"
    assert second is not None and second != first[0], "a fresh key for the next call"
    assert all(request.headers.get("idempotency-key") is None for request in script.sent[-7:])
    assert [request.method for request in script.sent[-7:]] == ["GET"] * 7


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        (500, "Internal Server Error", RemoteError),
        (409, {"error": {"type": "AlreadyDecided", "message": "already approved by alice"}}, AlreadyDecided),
        (
            404,
            {"error": {"type": "RequestNotFound", "message": "no request with id 'req_x'"}},
            RequestNotFound,
        ),
        (
            401,
            {"error": {"type": "NotAuthenticated", "message": "the API token is invalid"}},
            NotAuthenticated,
        ),
        (422, {"error": {"type": "InvalidInput", "message": "bad"}}, InvalidInput),
    ],
)
def test_other_failures_are_not_retried(status: int, body: Any, error: type[Exception]) -> None:
    script = Script([(status, body)], memory_answers)
    with (
        Client("http://signoff.test", "so_tok_x", transport=httpx.MockTransport(script)) as client,
        pytest.raises(error) as raised,
    ):
        client.remember("scope", "fingerprint")
    assert not isinstance(raised.value, ServerUnavailable)
    assert len(script.sent) == 1


def test_the_async_client_rides_out_the_same_failures() -> None:
    script = Script(TRANSIENT, memory_answers)

    async def scenario() -> bool:
        transport = httpx.MockTransport(script)
        async with AsyncClient("http://signoff.test", "so_tok_x", transport=transport) as client:
            await client.remember("scope", "fingerprint")
            return await client.recall("scope", "fingerprint")

    assert asyncio.run(scenario()) is True
    keys = {request.headers.get("idempotency-key") for request in script.sent[:-1]}
    assert len(script.sent) == len(TRANSIENT) + 2
    assert len(keys) == 1 and None not in keys


def test_a_call_gives_up_after_retry_for_with_what_went_wrong() -> None:
    script = Script([], lambda request: httpx.Response(503, json=STORE_DOWN))
    transport = httpx.MockTransport(script)
    with (
        Client("http://signoff.test", "so_tok_x", transport=transport, retry_for=0.2) as client,
        pytest.raises(
            ServerUnavailable,
            match=r"^the database is full \(gave up on GET /v1/memory after retry_for \(0\.2 s\); \d+ att",
        ),
    ):
        client.recall("scope", "fingerprint")
    assert len(script.sent) > 1


# -- a real server, restarted --------------------------------------------------------------------


def on_port(store: Store, port: int) -> LiveServer:
    """A new server over `store` on `port` (a restarted one: the clients reconnect to it)."""
    server = LiveServer(store)
    server.port, server.url = port, f"http://127.0.0.1:{port}"
    server.server.config.port = port
    return server


def eventually(condition: Callable[[], bool], timeout: float = 15.0) -> None:
    give_up = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < give_up, "the condition never held"
        time.sleep(0.02)


def test_a_gate_rides_out_server_restarts_while_it_opens_and_while_it_waits(store: Store) -> None:
    store.replace_rules(RULES, actor="test")
    never_started = LiveServer(store)
    port, token = never_started.port, never_started.user(AGENT_USER, role="agent")
    outcomes: list[Any] = []
    with Client(never_started.url, token) as client:
        gate = Gate(client, poll_interval=PUSH_ONLY)  # the server's rules
        call = ToolCall(name="deploy", args={"env": "prod"}, id="r1")

        def review() -> None:
            outcomes.append(gate.review(call, Scope(thread_id="restarts"), timeout=60))

        waiter = threading.Thread(target=review, daemon=True)
        waiter.start()  # the server is down: opening the request rides that out
        time.sleep(0.5)
        with on_port(store, port):
            eventually(lambda: bool(client.hub.watched()) and client.events.streams_opened >= 1)
        [request] = store.list_requests(thread_id="restarts")
        store.decide(request.id, Approve(), actor="alice")  # decided while the server is down
        time.sleep(0.3)
        with on_port(store, port):
            waiter.join(30)
    assert [outcome.status for outcome in outcomes] == ["approved"]
    assert len(store.list_requests(thread_id="restarts")) == 1


class LosingAnswers(httpx.BaseTransport):
    """Sends every call to the real server, but drops the first answer of each call that `lose`
    picks after the server sent it: a connection that breaks at the worst moment."""

    def __init__(self, lose: Callable[[httpx.Request], str | None]) -> None:
        self._real = httpx.HTTPTransport()
        self._lose = lose
        self.lost: dict[str, httpx.Request] = {}
        self.sent: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request)
        response = self._real.handle_request(request)
        kind = self._lose(request)
        if kind is not None and kind not in self.lost:
            response.read()
            response.close()
            self.lost[kind] = request
            raise httpx.ReadError("connection reset by peer", request=request)
        return response

    def close(self) -> None:
        self._real.close()


def create_or_finish(request: httpx.Request) -> str | None:
    if request.method != "POST":
        return None
    if request.url.path == "/v1/requests":
        return "create"
    if request.url.path.endswith("/execution") and json.loads(request.content).get("action") == "finish":
        return "finish"
    return None


def test_answers_lost_after_the_server_applied_a_write_do_no_harm(
    live_server: LiveServer, store: Store
) -> None:
    transport = LosingAnswers(create_or_finish)
    runs: list[str] = []

    def deploy(env: str) -> str:
        runs.append(env)
        return f"deployed to {env}"

    token = live_server.user(AGENT_USER, role="agent")
    with Client(live_server.url, token, transport=transport) as client, person_deciding(store, Approve()):
        reply = Gate(client, rules=RULES, poll_interval=PUSH_ONLY).run(
            ToolCall(name="deploy", args={"env": "prod"}, id="lost-1"), deploy, Scope(thread_id="lost")
        )
    assert set(transport.lost) == {"create", "finish"}
    assert runs == ["prod"]
    assert reply.executed and reply.content == "deployed to prod"
    [request] = store.list_requests(thread_id="lost")
    execution = store.get_execution(request.id)
    assert execution is not None
    assert (execution.status, execution.attempts, execution.result) == (
        ExecutionStatus.SUCCEEDED,
        1,
        "deployed to prod",
    )
    for lost in transport.lost.values():
        retry = transport.sent[transport.sent.index(lost) + 1]
        assert (retry.method, retry.url.path) == (lost.method, lost.url.path)
        assert retry.headers["idempotency-key"] == lost.headers["idempotency-key"]


def test_a_lease_renewal_that_fails_leaves_the_tool_running(sqlite_path: Any) -> None:
    class RenewalsFail(SQLiteStore):
        def renew_lease(self, request_id: str, token: str, *, lease: timedelta) -> bool:
            raise ServerUnavailable("the server is away")

    store = RenewalsFail(sqlite_path)
    try:
        gate = Gate(store, rules=RULES, lease=timedelta(seconds=0.15))
        with person_deciding(store, Approve()):
            reply = gate.run(
                ToolCall(name="deploy", args={"env": "dev"}, id="slow"),
                lambda env: time.sleep(0.3) or f"done in {env}",
                Scope(thread_id="lease"),
            )
    finally:
        store.close()
    assert reply.executed and reply.content == "done in dev"


# -- the event stream's reconnect delay ----------------------------------------------------------


@contextmanager
def crashing_event_server(connections: int) -> Iterator[tuple[str, list[dict[str, str]]]]:
    """A server whose event streams open (200, a first block naming event 5), then break (RST),
    `connections` times. Yields its URL and, per connection, the request's headers."""
    listener = socket.create_server(("127.0.0.1", 0))
    seen: list[dict[str, str]] = []

    def serve() -> None:
        for _ in range(connections):
            conn, _ = listener.accept()
            head = b""
            while b"\r\n\r\n" not in head:
                head += conn.recv(4096)
            lines = head.decode().split("\r\n")[1:]
            seen.append({k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines if line)})
            body = b"retry: 2000\n\nid: 5\n\n"
            conn.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
                + b"%x\r\n%s\r\n" % (len(body), body)
            )
            time.sleep(0.05)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            conn.close()  # a crash: reset, not a clean end of the response

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", seen
        thread.join(20)
    finally:
        listener.close()


def test_the_reconnect_delay_starts_over_once_a_stream_is_established(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_retry, "FIRST_DELAY", 0.05)
    monkeypatch.setattr(_retry, "MAX_DELAY", 5.0)
    failures_at_connect: list[int] = []
    with crashing_event_server(5) as (url, seen):
        follower = EventFollower(Servers(url), {}, WakeupHub())
        original = follower._stream

        async def stream(http: httpx.AsyncClient, url: str) -> None:
            failures_at_connect.append(follower.backoff.failures)
            await original(http, url)

        monkeypatch.setattr(follower, "_stream", stream)
        follower.start()
        eventually(lambda: len(seen) == 5 and follower.streams_opened == 5, timeout=20)
        follower.stop()
    assert failures_at_connect[:5] == [0, 1, 1, 1, 1], (
        "one failed attempt before each reconnect, not a growing count"
    )
    assert [headers.get("last-event-id") for headers in seen] == [None, "5", "5", "5", "5"]


def test_a_gate_waiting_on_a_token_that_is_revoked_gets_the_error_at_once(
    live_server: LiveServer, store: Store
) -> None:
    """No waiter polls: when the server refuses the event stream, every waiter looks itself."""
    token = live_server.user(AGENT_USER, role="agent")
    with Client(live_server.url, token) as client:
        gate = Gate(client, rules=RULES, poll_interval=PUSH_ONLY)
        call = ToolCall(name="deploy", args={"env": "prod"}, id="revoked")
        errors: list[BaseException] = []

        def review() -> None:
            try:
                gate.review(call, Scope(thread_id="revoked"), timeout=60)
            except BaseException as exc:  # what the waiting agent gets
                errors.append(exc)

        waiter = threading.Thread(target=review, daemon=True)
        waiter.start()
        eventually(lambda: bool(client.hub.watched()) and client.events.streams_opened >= 1)
        [credential] = store.list_credentials("token", AGENT_USER)
        store.revoke_credential(id=credential.id, actor="admin")
        waiter.join(30)
    assert [type(error) for error in errors] == [NotAuthenticated]
