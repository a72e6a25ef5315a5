"""A client given several servers (replicas of one signoff on one database) moves to the next
when one cannot be reached or answers 502/503/504, keeping each call's idempotency key, and its
event stream resumes on the next by `Last-Event-ID`; a single bad URL is refused at once."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from typer.testing import CliRunner

from signoff import Approve, AsyncClient, Client, Gate, RuleSet, Scope, Store, ToolCall
from signoff.cli import app
from signoff.errors import ConfigError
from signoff.requests import NewRequest, RequestRule
from tests import test_store_requests
from tests.live import LiveServer, free_port

RULES = "tools: {deploy: {requires_approval: true, approvers: [alice]}}"


@contextmanager
def answering(status: int) -> Iterator[str]:
    """A server that answers every call with `status` (a replica whose store is unavailable)."""

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            body = b'{"error": {"type": "StoreUnavailable", "message": "the disk is full"}}'
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def new_request(call_id: str) -> NewRequest:
    rule = RequestRule(approvers=("alice",))
    return test_store_requests.new_request(
        thread_id="t-1", tool_call_id=call_id, tool_name="deploy", rule=rule
    )


def test_several_urls_in_one_string_or_a_list_and_bad_ones_refused() -> None:
    with Client("http://127.0.0.1:1, http://127.0.0.1:2/", "so_tok_x") as client:
        assert client.servers.urls == ("http://127.0.0.1:1", "http://127.0.0.1:2")
        assert client.url == "http://127.0.0.1:1"
    for bad in ("", " , ", "ftp://host", "127.0.0.1:8765", []):
        with pytest.raises(ConfigError):
            Client(bad, "so_tok_x")


def test_a_dead_replica_is_passed_over_at_once_and_the_client_stays_with_the_next(
    live_server: LiveServer,
) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    token = live_server.user("bot", "agent")
    with Client([dead, live_server.url], token, retry_for=5) as client:
        request, created = client.create_request(new_request("c-1"))
        assert created and client.url == live_server.url
        assert client.get_request(request.id).id == request.id
        assert client.url == live_server.url, "it stays with the server that answers"


@pytest.mark.parametrize("status", [502, 503, 504])
def test_a_replica_answering_5xx_is_passed_over(live_server: LiveServer, status: int) -> None:
    token = live_server.user("bot", "agent")
    with answering(status) as failing, Client([failing, live_server.url], token, retry_for=5) as client:
        request, created = client.create_request(new_request(f"c-{status}"))
        assert created and client.url == live_server.url
    assert [found.id for found in live_server.store.list_requests(thread_id="t-1")] == [request.id]


class DiesAfterApplying(httpx.BaseTransport):
    """The first replica applies the first write, then its connection is lost before the answer
    (a replica killed just after its commit)."""

    def __init__(self, first: str) -> None:
        self.first = first
        self.inner = httpx.HTTPTransport()
        self.keys: list[tuple[str, str | None]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.keys.append(
            (str(request.url.copy_with(path="/", query=None)), request.headers.get("idempotency-key"))
        )
        response = self.inner.handle_request(request)
        if request.method == "POST" and str(request.url).startswith(self.first) and len(self.keys) == 1:
            response.read()
            response.close()
            raise httpx.ReadError("the replica died after its commit", request=request)
        return response


def test_a_write_the_dead_replica_applied_is_answered_not_applied_again_by_the_next(store: Store) -> None:
    with LiveServer(store) as first, LiveServer(store) as second:
        token = first.user("bot", "agent")
        alice = first.user("alice")
        transport = DiesAfterApplying(first.url)
        with Client([first.url, second.url], token, retry_for=5, transport=transport) as client:
            request, created = client.create_request(new_request("c-once"))
        transport.inner.close()
        assert created, "the retry got the first answer (201), not a second request"
        [(url_1, key_1), (url_2, key_2)] = transport.keys
        assert (url_1, url_2) == (first.url + "/", second.url + "/") and key_1 == key_2 is not None
        assert [found.id for found in store.list_requests(thread_id="t-1")] == [request.id]
        transport = DiesAfterApplying(first.url)
        with Client([first.url, second.url], alice, retry_for=5, transport=transport) as person:
            decided = person.decide(request.id, Approve())
        transport.inner.close()
        assert decided.status.value == "approved"
        decisions = [e for e in store.audit_entries(request_id=request.id) if e.action == "request.decided"]
        assert len(decisions) == 1


def test_a_waiting_gate_resumes_its_event_stream_on_the_next_replica(store: Store) -> None:
    store.replace_rules(RuleSet.from_yaml(RULES), actor="test")
    first = LiveServer(store).__enter__()
    with LiveServer(store) as second:
        token = first.user("bot", "agent")
        first.user("alice")
        client = Client([first.url, second.url], token, retry_for=10)
        outcome: list[object] = []
        call = ToolCall(name="deploy", args={"to": "prod"}, id="c-wait")
        gate = Gate(client, rules=None)
        waiting = threading.Thread(
            target=lambda: outcome.append(gate.review(call, Scope(thread_id="t-wait"), timeout=30)),
            daemon=True,
        )
        try:
            waiting.start()
            while not store.list_requests(thread_id="t-wait"):
                threading.Event().wait(0.02)
            while client.events.streams_opened < 1:
                threading.Event().wait(0.02)
            first.__exit__(None, None, None)  # the replica it streams from goes away
            [request] = store.list_requests(thread_id="t-wait")
            store.decide(request.id, Approve(), actor="alice")
            waiting.join(20)
            assert outcome and getattr(outcome[0], "status", None) == "approved"
            assert client.events.servers.current == second.url
            assert client.events.streams_opened >= 2
        finally:
            client.close()


def test_the_async_client_passes_over_a_dead_replica(live_server: LiveServer) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    token = live_server.user("bot", "agent")

    async def ask() -> str:
        async with AsyncClient([dead, live_server.url], token, retry_for=5) as client:
            request, _ = await client.create_request(new_request("c-async"))
            assert client.url == live_server.url
            return request.id

    assert live_server.store.get_request(asyncio.run(ask())).tool_name == "deploy"


def test_the_cli_takes_several_urls_in_signoff_url(live_server: LiveServer) -> None:
    token = live_server.user("alice")
    bot = live_server.user("bot", "agent")
    with Client(live_server.url, bot) as client:
        request, _ = client.create_request(new_request("c-cli"))
    dead = f"http://127.0.0.1:{free_port()}"
    result = CliRunner().invoke(
        app, ["pending", "--json"], env={"SIGNOFF_URL": f"{dead},{live_server.url}", "SIGNOFF_TOKEN": token}
    )
    assert result.exit_code == 0, result.output
    assert request.id in result.output
