"""`GET /v1/events`: live, filtered per caller, resumable with Last-Event-ID."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from signoff import Approve
from signoff.server.access import SESSION_COOKIE
from signoff.store import Store

from .conftest import url_for
from .live import LiveServer

Event = dict[str, Any]


END: Event = {"event": "end of stream"}
"""What `event_stream` puts in its queue when the server ends the stream."""


@contextmanager
def event_stream(
    server: LiveServer,
    token: str | None,
    *,
    last_event_id: int | None = None,
    session: str | None = None,
) -> Iterator[queue.Queue[Event]]:
    """Read the stream in a thread (with a token, or a web session's cookie); yields a queue of
    parsed events (with their `id`), then `END` if the server ends the stream."""
    events: queue.Queue[Event] = queue.Queue()
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if last_event_id is not None:
        headers["Last-Event-ID"] = str(last_event_id)
    cookies = {SESSION_COOKIE: session} if session else None
    client = httpx.Client(
        base_url=server.url, headers=headers, cookies=cookies, timeout=httpx.Timeout(30, read=None)
    )
    opened = threading.Event()
    stop = threading.Event()

    def read() -> None:
        try:
            with client.stream("GET", "/v1/events") as response:
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/event-stream")
                opened.set()
                fields: dict[str, str] = {}
                for line in response.iter_lines():
                    if stop.is_set():
                        return
                    if not line:
                        if "data" in fields:
                            events.put(
                                {
                                    "id": int(fields["id"]),
                                    "event": fields["event"],
                                    **json.loads(fields["data"]),
                                }
                            )
                        fields = {}
                    elif not line.startswith(":"):
                        name, _, value = line.partition(": ")
                        fields[name] = value
            if not stop.is_set():
                events.put(END)
        except httpx.HTTPError:
            return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert opened.wait(10), "the event stream did not open"
    try:
        yield events
    finally:
        stop.set()
        client.close()
        reader.join(0.2)


def next_event(events: queue.Queue[Event], *, timeout: float = 10) -> Event:
    return events.get(timeout=timeout)


def create(server: LiveServer, token: str, call_id: str, **fields: Any) -> str:
    with server.client(token) as client:
        response = client.post(
            "/v1/requests",
            json={
                "thread_id": "t",
                "tool_call_id": call_id,
                "tool": "send_email",
                "args": {"to": "x"},
                **fields,
            },
        )
    assert response.status_code == 201, response.text
    request_id: str = response.json()["id"]
    return request_id


def test_a_request_created_by_another_process_appears_on_an_open_stream(
    live_server: LiveServer, store: Store
) -> None:
    alice = live_server.user("alice")
    with event_stream(live_server, alice) as events:
        script = (
            "import sys\n"
            "from signoff import Gate, RuleSet, Scope, Pending, ToolCall, open_store\n"
            "store = open_store(sys.argv[1])\n"
            "gate = Gate(store, rules=RuleSet.from_yaml('tools: {wire_money: {requires_approval: true}}'))\n"
            "call = ToolCall(name='wire_money', args={'cents': 5}, id='c1')\n"
            "result = gate.submit(call, Scope(thread_id='elsewhere'))\n"
            "assert isinstance(result, Pending)\n"
            "print(result.request_id)\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", script, url_for(store)],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        request_id = done.stdout.strip()
        event = next_event(events)
    assert event["event"] == "created"
    assert event["request"]["id"] == request_id
    assert event["request"]["tool"] == "wire_money"
    assert event["request"]["args"] == {"cents": 5}


def test_the_stream_carries_every_kind_of_change_in_order(live_server: LiveServer, store: Store) -> None:
    bot, alice = live_server.user("bot", "agent"), live_server.user("alice")
    with event_stream(live_server, alice) as events:
        drafted = create(live_server, bot, "c1", drafting=True, approvers=["alice"])
        store.update_draft(drafted, args={"subject": "hi"}, ready=True)
        store.decide(drafted, Approve(), actor="alice")
        cancelled = create(live_server, bot, "c2", approvers=["alice"])
        store.cancel(cancelled, actor="bot", reason="stop")
        expiring = create(live_server, bot, "c3", approvers=["alice"], deadline=0.1)
        seen = [next_event(events) for _ in range(7)]
    assert [(event["event"], event["request"]["id"]) for event in seen] == [
        ("created", drafted),
        ("updated", drafted),
        ("decided", drafted),
        ("created", cancelled),
        ("cancelled", cancelled),
        ("created", expiring),
        ("expired", expiring),
    ]
    assert [event["id"] for event in seen] == sorted(event["id"] for event in seen)
    assert seen[2]["request"]["status"] == "approved"
    assert "record" not in seen[0]["request"]  # people get the redacted view


def test_a_stream_shows_only_what_its_user_may_see(live_server: LiveServer) -> None:
    bot, alice, mallory = (
        live_server.user("bot", "agent"),
        live_server.user("alice"),
        live_server.user("mallory"),
    )
    with event_stream(live_server, mallory) as mallorys, event_stream(live_server, alice) as alices:
        private = create(live_server, bot, "c1", approvers=["alice"])
        public = create(live_server, bot, "c2")
        assert next_event(alices)["request"]["id"] == private
        assert next_event(alices)["request"]["id"] == public
        only = next_event(mallorys)
        assert only["request"]["id"] == public
        assert mallorys.empty()


def test_the_agent_gets_its_own_requests_with_the_full_record(live_server: LiveServer) -> None:
    bot = live_server.user("bot", "agent")
    with event_stream(live_server, bot) as events:
        request_id = create(live_server, bot, "c1", approvers=["alice"], args={"password": "s3cret"})
        event = next_event(events)
    assert event["request"]["id"] == request_id
    assert event["request"]["record"]["args"] == {"password": "s3cret"}


def test_reconnecting_with_last_event_id_replays_what_was_missed(
    live_server: LiveServer, store: Store
) -> None:
    bot, alice = live_server.user("bot", "agent"), live_server.user("alice")
    with event_stream(live_server, alice) as events:
        first = create(live_server, bot, "c1", approvers=["alice"])
        seen = next_event(events)
    assert seen["request"]["id"] == first
    missed = create(live_server, bot, "c2", approvers=["alice"])
    store.decide(first, Approve(), actor="alice")
    with event_stream(live_server, alice, last_event_id=seen["id"]) as events:
        replayed = [next_event(events), next_event(events)]
        live = create(live_server, bot, "c3", approvers=["alice"])
        after = next_event(events)
    assert [(event["event"], event["request"]["id"]) for event in replayed] == [
        ("created", missed),
        ("decided", first),
    ]
    assert (after["event"], after["request"]["id"]) == ("created", live)
    assert events.empty()


def test_the_events_endpoint_needs_authentication(live_server: LiveServer) -> None:
    with live_server.client() as anonymous:
        response = anonymous.get("/v1/events")
    assert response.status_code == 401
    assert response.json()["error"]["type"] == "NotAuthenticated"


def as_in_the_feed(view: dict[str, Any]) -> dict[str, Any]:
    """One request as `GET /v1/requests/{id}` shows it, without what only that view carries (its
    planned reminders and escalations, read from their own table)."""
    return {key: value for key, value in view.items() if key not in ("steps", "steps_summary")}


def test_changes_this_server_made_carry_the_request_as_stored(live_server: LiveServer, store: Store) -> None:
    """The feed takes requests this server created or decided from the call that did it, not from
    the store: what it sends must be exactly what the store holds."""
    bot, alice = live_server.user("bot", "agent"), live_server.user("alice")
    schema = {"type": "object", "properties": {"to": {"type": "string"}}, "required": ["to"]}
    with event_stream(live_server, bot) as events, live_server.client(alice) as person:
        edited = create(live_server, bot, "c1", approvers=["alice"], args_schema=schema)
        created = next_event(events)
        with live_server.client(bot) as agent:
            assert created["request"] == as_in_the_feed(agent.get(f"/v1/requests/{edited}").json())
        answer = person.post(
            f"/v1/requests/{edited}/decision", json={"type": "edit", "args": {"to": "y"}, "comment": "not x"}
        )
        assert answer.status_code == 200, answer.text
        decided = next_event(events)
        with live_server.client(bot) as agent:
            assert decided["request"] == as_in_the_feed(agent.get(f"/v1/requests/{edited}").json())
    assert (created["event"], decided["event"]) == ("created", "decided")
    assert decided["request"]["status"] == "edited"
    assert decided["request"]["record"]["final_args"] == {"to": "y"}


def test_a_quorum_decided_elsewhere_after_a_vote_here_is_sent_decided(
    live_server: LiveServer, store: Store
) -> None:
    bot, alice = live_server.user("bot", "agent"), live_server.user("alice")
    live_server.user("bob")
    with event_stream(live_server, alice) as events, live_server.client(alice) as person:
        request_id = create(live_server, bot, "c1", rule={"approvers": ["alice", "bob"], "quorum": 2})
        assert next_event(events)["event"] == "created"
        vote = person.post(f"/v1/requests/{request_id}/decision", json={"type": "approve"})
        assert vote.status_code == 200 and vote.json()["status"] == "pending", vote.text
        assert next_event(events)["event"] == "updated"
        store.decide(request_id, Approve(), actor="bob")  # the deciding vote, from another process
        decided = next_event(events)
    assert decided["event"] == "decided"
    assert decided["request"]["status"] == "approved"


# -- open streams re-check their caller ------------------------------------------------------------


def ended(events: queue.Queue[Event], *, timeout: float = 15) -> list[Event]:
    """The events before the server ended the stream (fails if it does not end)."""
    seen = []
    while (event := next_event(events, timeout=timeout)) is not END:
        seen.append(event)
    return seen


def test_a_stream_ends_when_its_token_is_revoked(live_server: LiveServer, store: Store) -> None:
    bot = live_server.user("bot", "agent")
    alice = live_server.user("alice")
    with event_stream(live_server, alice) as events:
        first = create(live_server, bot, "c1")
        assert next_event(events)["request"]["id"] == first
        [token] = store.list_credentials("token", "alice")
        with live_server.client(alice) as own:
            assert own.delete(f"/v1/tokens/{token.id}").status_code == 200
        assert ended(events) == []
    with live_server.client(alice) as revoked:
        assert revoked.get("/v1/events").status_code == 401


def test_a_stream_ends_when_its_token_is_revoked_elsewhere(live_server: LiveServer, store: Store) -> None:
    """Revoked by another process (the CLI on the database): noticed within a few seconds."""
    alice = live_server.user("alice")
    with event_stream(live_server, alice) as events:
        [token] = store.list_credentials("token", "alice")
        store.revoke_credential(id=token.id, actor="admin")
        assert ended(events) == []


def test_a_stream_ends_when_its_session_signs_out(live_server: LiveServer, store: Store) -> None:
    live_server.user("alice")
    session, _ = store.issue_credential("session", "alice", actor="alice", channel="web")
    found = store.session_of(session)
    assert found is not None
    csrf = found[1]
    bot = live_server.user("bot", "agent")
    with event_stream(live_server, None, session=session) as events:
        first = create(live_server, bot, "c1")
        assert next_event(events)["request"]["id"] == first
        with httpx.Client(base_url=live_server.url, cookies={SESSION_COOKIE: session}) as browser:
            signed_out = browser.post("/logout", headers={"X-CSRF-Token": csrf})
        assert signed_out.status_code == 303
        assert ended(events) == []


def test_a_stream_ends_when_its_user_is_disabled(live_server: LiveServer, store: Store) -> None:
    alice = live_server.user("alice")
    bot = live_server.user("bot", "agent")
    with event_stream(live_server, alice) as events:
        store.update_user("alice", disabled=True, actor="admin")
        later = ended(events)
        create(live_server, bot, "c1")
    assert later == []


def test_leaving_an_approver_group_stops_that_groups_events(live_server: LiveServer, store: Store) -> None:
    bot = live_server.user("bot", "agent")
    alice = live_server.user("alice", groups=("dba",))
    with event_stream(live_server, alice) as events:
        before = create(live_server, bot, "c1", approvers=["group:dba"])
        assert next_event(events)["request"]["id"] == before
        store.remove_group_member("dba", "alice", actor="admin")
        time.sleep(live_server.app.state.server.callers.ttl + 0.5)  # the next event's check reads it again
        create(live_server, bot, "c2", approvers=["group:dba"])
        hers = create(live_server, bot, "c3", approvers=["alice"])
        assert next_event(events)["request"]["id"] == hers
        assert events.empty()


def test_an_escalation_reaches_the_streams_of_the_approvers_it_adds(
    live_server: LiveServer, store: Store
) -> None:
    from datetime import timedelta

    from signoff.rules.model import RuleSet

    store.replace_rules(
        RuleSet.from_yaml(
            "tools:\n  send_email: {requires_approval: true, approvers: [alice],"
            " escalate: [{after: 4h, to: [group:oncall]}]}\n"
        ),
        actor="test",
    )
    agent = live_server.user("bot", role="agent")
    dave = live_server.user("dave", groups=("oncall",))
    erin = live_server.user("erin")
    with event_stream(live_server, dave) as dave_events, event_stream(live_server, erin) as erin_events:
        request_id = create(live_server, agent, "c1")
        time.sleep(0.3)  # let the feed read the creation: dave may not see it yet
        assert dave_events.empty()
        made = store.get_request(request_id).created_at
        store.run_due_steps(now=made + timedelta(hours=4, minutes=1))
        event = next_event(dave_events)
        assert (event["event"], event["action"]) == ("updated", "request.escalated")
        assert event["request"]["id"] == request_id
        assert "group:oncall" in event["request"]["approvers"]
        with live_server.client(dave) as client:  # and it is his to decide now
            assert client.get(f"/v1/requests/{request_id}").status_code == 200
    assert erin_events.empty()  # neither asked first nor added
