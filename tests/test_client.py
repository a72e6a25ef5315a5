"""`Client` and `AsyncClient` against a live server: waiting by push and long-poll, one event
stream for many waiters, the same errors as a local store, exactly-once runs over the API."""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
import time
from collections.abc import Iterator
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
    Decision,
    DecisionNotAllowed,
    Edit,
    ExecutionStatus,
    Gate,
    InvalidArguments,
    NotAnApprover,
    NotAuthenticated,
    Pending,
    PermissionDenied,
    Reject,
    RemoteError,
    Request,
    RequestExpired,
    RequestNotFound,
    RequestStatus,
    Respond,
    RuleSet,
    Scope,
    ServerUnavailable,
    Store,
    ToolCall,
)
from signoff._util import utcnow
from signoff.client._sse import SseDecoder
from signoff.errors import InvalidInput
from signoff.execution import args_digest, current_owner
from tests.conftest import AGENT_USER
from tests.helpers import person_deciding
from tests.live import LiveServer, free_port

RULES = RuleSet.from_yaml(
    """
tools:
  deploy: {requires_approval: true, approvers: [alice]}
  send_email: {requires_approval: true, approvers: [alice], allowed_decisions: [approve, reject]}
  short_lived: {requires_approval: true, approvers: [alice], deadline: 2s}
"""
)
PUSH_ONLY = 3600.0
"""A poll interval no test waits for: a waiter that wakes was pushed."""
ENV_SCHEMA = {"type": "object", "properties": {"env": {"type": "string"}}, "required": ["env"]}


@pytest.fixture
def agent_token(live_server: LiveServer) -> str:
    return live_server.user(AGENT_USER, role="agent")


@pytest.fixture
def agent(live_server: LiveServer, agent_token: str) -> Iterator[Client]:
    with Client(live_server.url, agent_token) as client:
        yield client


@pytest.fixture
def alice(live_server: LiveServer) -> Iterator[Client]:
    """A person with her own token, deciding through the API."""
    with Client(live_server.url, live_server.user("alice")) as client:
        yield client


def open_request(
    client: Client,
    tool: str = "deploy",
    *,
    call_id: str = "c1",
    thread: str = "t",
    schema: dict[str, Any] | None = None,
) -> Request:
    call = ToolCall(name=tool, args={"env": "prod"}, id=call_id, schema=schema)
    pending = Gate(client, rules=RULES).submit(call, Scope(thread_id=thread))
    assert isinstance(pending, Pending)
    return pending.request


@contextmanager
def deciding_later(client: Client, request_id: str, decision: Decision, delay: float = 0.3) -> Iterator[None]:
    """While the block runs, `client` decides after `delay` seconds, through the API."""
    errors: list[BaseException] = []

    def decide() -> None:
        time.sleep(delay)
        try:
            client.decide(request_id, decision)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    thread = threading.Thread(target=decide, daemon=True)
    thread.start()
    yield
    thread.join(15)
    if errors:
        raise errors[0]


# -- waiting -------------------------------------------------------------------------------------


def test_a_decision_through_the_api_wakes_a_long_poll(agent: Client, alice: Client) -> None:
    request = open_request(agent)
    assert agent.wait(request.id, timeout=0.2).status is RequestStatus.PENDING, "as it is at the timeout"
    started = time.monotonic()
    with deciding_later(alice, request.id, Approve(comment="ship it")):
        decided = agent.wait(request.id, timeout=30)
    assert time.monotonic() - started < 5
    assert decided.status is RequestStatus.APPROVED
    assert decided.decision is not None
    assert (decided.decision.actor, decided.decision.channel) == ("alice", "api")
    assert decided.final_args == {"env": "prod"}, "the agent gets the full record back"


def test_async_waiters_resume_on_a_decision(
    live_server: LiveServer, agent_token: str, agent: Client, alice: Client
) -> None:
    call = ToolCall(name="deploy", args={"env": "prod"}, id="c1")
    gate = Gate(agent, rules=RULES, poll_interval=PUSH_ONLY)
    request = open_request(agent)

    async def scenario() -> tuple[Request, Any]:
        async with AsyncClient(live_server.url, agent_token) as client:
            with pytest.raises(RequestNotFound, match="no request with id 'req_nope'"):
                await client.get_request("req_nope")
            waiting = asyncio.gather(
                client.wait(request.id, timeout=30), gate.areview(call, Scope(thread_id="t"), timeout=30)
            )
            await asyncio.sleep(0.5)
            assert not waiting.done()
            await asyncio.to_thread(alice.decide, request.id, Edit(args={"env": "staging"}))
            long_polled, outcome = await asyncio.wait_for(waiting, 10)
            return long_polled, outcome

    long_polled, outcome = asyncio.run(scenario())
    assert long_polled.status is RequestStatus.EDITED
    assert outcome.execute and outcome.final_tool_params == {"env": "staging"}
    assert outcome.actor == "alice"


def test_many_async_waiters_share_one_event_stream(
    live_server: LiveServer, agent: Client, store: Store
) -> None:
    gate = Gate(agent, rules=RULES, poll_interval=PUSH_ONLY)
    waiters = 200

    async def scenario() -> tuple[int, int, list[str]]:
        tasks = [
            asyncio.create_task(
                gate.areview(ToolCall(name="deploy", args={"n": n}, id=f"a{n}"), Scope(thread_id="many"))
            )
            for n in range(waiters)
        ]
        while len(agent.hub.watched()) < waiters or agent.events.streams_opened < 1:
            await asyncio.sleep(0.01)
        open_streams = len(live_server.app.state.server.feed._subscriptions)
        stream_threads = sum(1 for t in threading.enumerate() if t.name == "signoff-client-events")
        for request in store.list_requests(thread_id="many", limit=1000):
            await asyncio.to_thread(store.decide, request.id, Approve(), actor="alice")
        outcomes = await asyncio.wait_for(asyncio.gather(*tasks), 60)
        return open_streams, stream_threads, [outcome.status for outcome in outcomes]

    open_streams, stream_threads, statuses = asyncio.run(scenario())
    assert statuses == ["approved"] * waiters
    assert open_streams == 1, "the server holds one event stream for all the client's waiters"
    assert stream_threads == 1
    assert agent.events.streams_opened == 1


def test_the_event_stream_resumes_after_the_server_restarts(store: Store) -> None:
    """Decided while the server was down: only the replay from Last-Event-ID can wake the waiter."""
    first = LiveServer(store)
    outcomes: list[Any] = []
    with Client(first.url, first.user(AGENT_USER, role="agent")) as client:
        gate = Gate(client, rules=RULES, poll_interval=PUSH_ONLY)
        call = ToolCall(name="deploy", args={"env": "prod"}, id="r1")
        waiter = threading.Thread(
            target=lambda: outcomes.append(gate.review(call, Scope(thread_id="restart"), timeout=60)),
            daemon=True,
        )
        with first:
            waiter.start()
            eventually(lambda: client.events.streams_opened == 1)
            open_request(client, call_id="r2", thread="restart")  # an event: the stream learns an id
            eventually(lambda: client.events.last_event_id is not None)
        request = store.find_request("restart", "r1", created_by=AGENT_USER)
        assert request is not None
        store.decide(request.id, Approve(), actor="alice")
        second = LiveServer(store)
        second.server.config.port = first.port  # the same address: the client reconnects to it
        with second:
            waiter.join(30)
        assert client.events.streams_opened == 2
    assert [outcome.status for outcome in outcomes] == ["approved"]


def eventually(condition: Any, timeout: float = 10.0) -> None:
    give_up = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < give_up, "the condition never held"
        time.sleep(0.01)


# -- errors --------------------------------------------------------------------------------------


def test_errors_are_the_same_classes_with_the_servers_messages(
    live_server: LiveServer, agent: Client, alice: Client
) -> None:
    with pytest.raises(RequestNotFound, match="no request with id 'req_nope'"):
        agent.get_request("req_nope")
    email = open_request(agent, "send_email")
    with (
        Client(live_server.url, live_server.user("bob")) as bob,
        pytest.raises(NotAnApprover, match=f"bob is not an approver of request {email.id}"),
    ):
        bob.get_request(email.id)
    with pytest.raises(PermissionDenied, match=f"{AGENT_USER} is an agent; only people decide"):
        agent.decide(email.id, Approve())
    with pytest.raises(DecisionNotAllowed, match="'respond' is not allowed for this request"):
        alice.decide(email.id, Respond(message="no"))
    alice.decide(email.id, Approve())
    with pytest.raises(AlreadyDecided, match=f"request {email.id} was already approved by alice"):
        alice.decide(email.id, Reject())

    deploy = open_request(agent, call_id="c2", schema=ENV_SCHEMA)
    with pytest.raises(InvalidArguments, match="env: 5 is not of type 'string'"):
        alice.decide(deploy.id, Edit(args={"env": 5}))
    assert agent.get_request(deploy.id).status is RequestStatus.PENDING

    brief = open_request(agent, "short_lived", call_id="c3")
    time.sleep(max(0.0, (brief.deadline - utcnow()).total_seconds()) + 0.2)
    with pytest.raises(RequestExpired, match=re.escape(f"request {brief.id} expired at")):
        alice.decide(brief.id, Approve())
    with pytest.raises(InvalidInput, match="unknown status bogus"):
        agent.list_requests(status="bogus")


def test_a_bad_token_is_not_authenticated(live_server: LiveServer) -> None:
    with Client(live_server.url, "so_tok_not-a-real-one") as client:
        gate = Gate(client, rules=RULES)
        with pytest.raises(NotAuthenticated, match="the API token is invalid, expired or revoked"):
            gate.review(ToolCall(name="deploy", args={}), Scope(thread_id="t"))


def test_a_server_that_stays_down_is_given_up_on_when_the_caller_can_wait_no_longer() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with Client(url, "so_tok_whatever", timeout=2, retry_for=0.3) as client:
        with pytest.raises(
            ServerUnavailable,
            match=f"^cannot reach the signoff server at {re.escape(url)}.*"
            r"\(gave up on GET /v1/requests as long as the gate could wait; \d+ attempts over 1\.\d s\)$",
        ):
            Gate(client, rules=RULES).review(
                ToolCall(name="deploy", args={}), Scope(thread_id="t"), timeout=1
            )
        with pytest.raises(
            ServerUnavailable, match=r"cannot reach the signoff server.*after retry_for \(0\.3 s\)"
        ):
            client.wait("req_x", timeout=1)
    assert issubclass(ServerUnavailable, RemoteError)


def test_an_answer_that_is_not_signoffs_is_a_remote_error() -> None:
    def gateway(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/wait"):
            return httpx.Response(200, text="<html>Welcome to nginx</html>")
        return httpx.Response(502, text="<html>Bad Gateway</html>")

    with Client(
        "http://127.0.0.1:9", "so_tok_x", transport=httpx.MockTransport(gateway), retry_for=0
    ) as client:
        with pytest.raises(
            ServerUnavailable, match=r"^the server answered 502: <html>Bad Gateway</html> \(gave up on GET"
        ):
            client.get_request("req_x")
        with pytest.raises(RemoteError, match=r"is not JSON: <html>Welcome to nginx</html>$") as raised:
            client.wait("req_x", timeout=1)
    assert not isinstance(raised.value, ServerUnavailable), "an odd answer is not retried"


# -- running tools exactly once ------------------------------------------------------------------


def test_run_through_the_client_runs_the_tool_once_across_a_replay(
    live_server: LiveServer, agent_token: str, store: Store
) -> None:
    runs: list[str] = []

    def deploy(env: str) -> str:
        runs.append(env)
        return f"deployed to {env}"

    call = ToolCall(name="deploy", args={"env": "prod"}, id="run-1")
    scope = Scope(thread_id="runs")
    with Client(live_server.url, agent_token) as client, person_deciding(store, Approve()):
        first = Gate(client, rules=RULES).run(call, deploy, scope)
    with Client(live_server.url, agent_token) as restarted:  # the agent's process came back: a replay
        replay = Gate(restarted, rules=RULES).run(call, deploy, scope)
    assert runs == ["prod"]
    assert first.executed and first.content == "deployed to prod"
    assert replay.replayed and replay.content == "deployed to prod"
    assert first.outcome.request_id is not None
    execution = store.get_execution(first.outcome.request_id)
    assert execution is not None
    assert (execution.status, execution.attempts) == (ExecutionStatus.SUCCEEDED, 1)
    assert execution.owner is not None and execution.owner["pid"] == os.getpid()


def test_a_claim_names_this_process_as_the_owner() -> None:
    bodies: list[dict[str, Any]] = []

    def server(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        execution = {"status": "running", "attempts": 1, "started_at": "2026-01-01T00:00:00Z"}
        return httpx.Response(200, json={"kind": "claimed", "token": "t1", "execution": execution})

    with Client("http://127.0.0.1:9", "so_tok_x", transport=httpx.MockTransport(server)) as client:
        claim = client.claim_execution(
            "req_1", lease=timedelta(seconds=30), args_digest=args_digest({"to": "bob"}), idempotent=True
        )
    [body] = bodies
    here = current_owner()
    assert {key: body["owner"][key] for key in ("host", "pid", "started")} == {
        key: here[key] for key in ("host", "pid", "started")
    }
    assert (body["action"], body["lease_seconds"], body["idempotent"]) == ("claim", 30.0, True)
    assert body["args_digest"] == args_digest({"to": "bob"})
    assert (claim.kind, claim.token, claim.execution.status) == ("claimed", "t1", ExecutionStatus.RUNNING)
    assert claim.execution.request_id == "req_1"


# -- the event stream's decoding -----------------------------------------------------------------


def test_server_sent_events_are_decoded_by_the_rules() -> None:
    decoder = SseDecoder()
    lines = ["retry: 2000", "", ": keepalive", "", "id: 7", "event: decided", "data: {", "data: }", ""]
    events = [event for line in lines if (event := decoder.feed(line)) is not None]
    assert [(e.id, e.event, e.data) for e in events] == [("7", "decided", "{\n}")]
    assert decoder.last_event_id == "7"
