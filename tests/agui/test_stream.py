"""What a run streams: the caller's decidable requests as tool calls, then the interrupt."""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta

import httpx
import pytest
from ag_ui.core import (
    RunErrorEvent,
    RunStartedEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)

from signoff import Approve
from signoff.requests import RequestStatus

from .conftest import World
from .support import (
    ask,
    call_args,
    finished,
    history,
    interrupts,
    results,
    run,
    run_body,
    stream_events,
    types,
)


def test_pending_requests_stream_as_tool_calls_then_an_interrupt(world: World) -> None:
    first = ask(world.store, tool="send_email", args={"to": "bob@example.com"}, agent="mailer")
    second = ask(world.store, tool="pay", args={"amount": 12}, agent="payer", allowed=("approve", "reject"))
    events = run(world.server, world.alice, run_body())
    assert isinstance(events[0], RunStartedEvent)
    assert types(events) == [
        "RUN_STARTED",
        *["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"] * 2,
        "RUN_FINISHED",
    ]
    starts = [event for event in events if isinstance(event, ToolCallStartEvent)]
    assert [start.tool_call_name for start in starts] == ["send_email", "pay"]  # oldest first
    assert [start.tool_call_id for start in starts] == [
        f"{first.tool_call_id}~{first.id}",
        f"{second.tool_call_id}~{second.id}",
    ]
    assert [start.metadata["signoff"]["agent"] for start in starts] == ["mailer", "payer"]
    assert call_args(events) == {
        starts[0].tool_call_id: {"to": "bob@example.com"},
        starts[1].tool_call_id: {"amount": 12},
    }
    found = interrupts(events)
    assert [item.id for item in found] == [start.tool_call_id for start in starts]
    assert all(item.reason == "tool_call" for item in found)
    assert [item.tool_call_id for item in found] == [start.tool_call_id for start in starts]
    assert found[0].expires_at == first.to_dict()["deadline"]
    assert found[0].metadata["signoff"]["request_id"] == first.id
    pay_schema = json.dumps(found[1].response_schema)
    assert "editedArgs" not in pay_schema  # pay allows approve and reject only
    assert "editedArgs" in json.dumps(found[0].response_schema)


def test_the_same_tool_call_id_in_two_agents_threads_stays_two_calls(world: World) -> None:
    world.server.user("bot2", "agent")
    one = ask(world.store, thread="t1", call="call_1", created_by="bot")
    other = ask(world.store, thread="t1", call="call_1", created_by="bot2")
    events = run(world.server, world.alice, run_body())
    ids = [item.id for item in interrupts(events)]
    assert ids == [f"call_1~{one.id}", f"call_1~{other.id}"]
    starts = [event for event in events if isinstance(event, ToolCallStartEvent)]
    assert starts[0].parent_message_id != starts[1].parent_message_id
    answer = [{"interruptId": ids[1], "status": "resolved", "payload": "denied"}]
    run(world.server, world.alice, run_body(resume=[*answer, {"interruptId": ids[0], "status": "cancelled"}]))
    assert world.store.get_request(one.id).status is RequestStatus.PENDING
    assert world.store.get_request(other.id).status is RequestStatus.REJECTED


def test_nothing_pending_finishes_with_success(world: World) -> None:
    events = run(world.server, world.alice, run_body())
    assert types(events) == ["RUN_STARTED", "RUN_FINISHED"]
    outcome = finished(events).outcome
    assert outcome is not None
    assert outcome.type == "success"


def test_a_reconnect_resends_every_pending_request(world: World) -> None:
    requests = [ask(world.store) for _ in range(3)]
    first = run(world.server, world.alice, run_body(thread="page"))
    answer = {"interruptId": interrupts(first)[0].id, "status": "resolved", "payload": "approved"}
    others = [{"interruptId": item.id, "status": "cancelled"} for item in interrupts(first)[1:]]
    run(world.server, world.alice, run_body(thread="page", messages=history(first), resume=[answer, *others]))
    # A refreshed page: a new thread, no history.
    again = run(world.server, world.alice, run_body(thread="refreshed"))
    assert [item.metadata["signoff"]["request_id"] for item in interrupts(again)] == [
        r.id for r in requests[1:]
    ]
    assert types(again).count("TOOL_CALL_START") == 2
    assert call_args(again) == {
        item.id: {"to": "bob@example.com", "subject": "hi"} for item in interrupts(again)
    }


def test_a_client_that_holds_the_calls_is_not_sent_them_twice(world: World) -> None:
    ask(world.store)
    first = run(world.server, world.alice, run_body())
    (interrupt,) = interrupts(first)
    again = run(
        world.server,
        world.alice,
        run_body(messages=history(first), resume=[{"interruptId": interrupt.id, "status": "cancelled"}]),
    )
    assert types(again) == ["RUN_STARTED", "RUN_FINISHED"]  # its args would be appended to the held ones
    assert [item.id for item in interrupts(again)] == [interrupt.id]


def test_a_request_decided_elsewhere_gets_its_result_in_the_next_run(world: World) -> None:
    request = ask(world.store)
    first = run(world.server, world.alice, run_body())
    world.store.decide(request.id, Approve(), actor="alice", channel="web")
    (interrupt,) = interrupts(first)
    resume = [{"interruptId": interrupt.id, "status": "resolved", "payload": "denied"}]
    second = run(world.server, world.alice, run_body(messages=history(first), resume=resume))
    result = results(second)[interrupt.id]
    assert result["status"] == "approved"
    assert "approved by alice" in result["message"]
    assert world.store.get_request(request.id).status is RequestStatus.APPROVED
    # Without an answer, a client that holds the call still learns how it ended.
    third = run(world.server, world.alice, run_body(thread="other", messages=history(first)))
    assert results(third)[interrupt.id]["status"] == "approved"


def test_an_expired_request_is_reported_cancelled(world: World) -> None:
    request = ask(world.store, deadline=timedelta(seconds=1))
    first = run(world.server, world.alice, run_body())
    (interrupt,) = interrupts(first)
    time.sleep(1.3)
    resume = [{"interruptId": interrupt.id, "status": "cancelled"}]
    second = run(world.server, world.alice, run_body(messages=history(first), resume=resume))
    result = results(second)[interrupt.id]
    assert result["status"] == "cancelled"
    assert result["expired"] is True
    assert "expired" in result["message"]
    assert world.store.get_request(request.id).status is RequestStatus.EXPIRED
    assert not interrupts(second)
    # Answering it anyway is no error: the result says it expired.
    late = [{"interruptId": interrupt.id, "status": "resolved", "payload": "approved"}]
    third = run(world.server, world.alice, run_body(resume=late))
    assert results(third)[interrupt.id]["expired"] is True
    assert world.store.get_request(request.id).status is RequestStatus.EXPIRED


def test_a_drafting_request_streams_its_args_and_joins_the_interrupt_when_ready(world: World) -> None:
    request = ask(world.store, args={"to": "bob@example.com", "body": "He"}, drafting=True)
    seen: list[object] = []

    def agent_streams() -> None:
        while not any(isinstance(event, ToolCallStartEvent) for event in seen):
            time.sleep(0.01)
        for body in ("Hello", "Hello, wor", "Hello, world"):
            time.sleep(0.1)
            world.store.update_draft(request.id, args={"body": body}, actor="bot")
        time.sleep(0.1)
        world.store.update_draft(request.id, args={"body": "Hello, world!"}, ready=True, actor="bot")

    thread = threading.Thread(target=agent_streams)
    thread.start()
    for event in stream_events(world.server, world.alice, run_body()):
        seen.append(event)
    thread.join(10)
    kinds = types(seen)  # type: ignore[arg-type]
    assert kinds[:2] == ["RUN_STARTED", "TOOL_CALL_START"]
    deltas = [event.delta for event in seen if isinstance(event, ToolCallArgsEvent)]
    assert len(deltas) >= 3  # the args came in pieces, as the agent streamed them
    assert json.loads("".join(deltas)) == {"to": "bob@example.com", "body": "Hello, world!"}
    end = kinds.index("TOOL_CALL_END")
    assert kinds[end + 1 :] == ["RUN_FINISHED"]
    assert isinstance(seen[end], ToolCallEndEvent)
    (interrupt,) = interrupts(seen)  # type: ignore[arg-type]
    assert interrupt.metadata["signoff"]["request_id"] == request.id


def test_a_pending_request_waits_for_no_draft(world: World) -> None:
    """A draft the run is not waiting for does not hold the others back past draft_wait."""
    ask(world.store, drafting=True)
    pending = ask(world.store)
    events = run(world.server, world.alice, run_body(props={"draft_wait": 0.3}))
    assert [item.metadata["signoff"]["request_id"] for item in interrupts(events)] == [pending.id]
    assert types(events).count("TOOL_CALL_END") == 2  # the draft's call is closed before the run ends


def test_wait_keeps_an_empty_run_open_until_a_request_comes(world: World) -> None:
    timer = threading.Timer(0.3, lambda: ask(world.store, tool="deploy"))
    timer.start()
    events = run(world.server, world.alice, run_body(props={"wait": 10}))
    timer.join()
    assert [item.metadata["signoff"]["tool"] for item in interrupts(events)] == ["deploy"]


def test_a_revoked_token_ends_the_open_run(world: World) -> None:
    ask(world.store, drafting=True)
    secret = world.server.user("alice")
    seen: list[object] = []
    started = threading.Event()

    def read() -> None:
        for event in stream_events(world.server, secret, run_body()):
            seen.append(event)
            if isinstance(event, ToolCallStartEvent):
                started.set()

    reader = threading.Thread(target=read)
    reader.start()
    assert started.wait(10)
    world.store.revoke_credential(secret=secret, actor="test")
    reader.join(15)
    assert not reader.is_alive()
    assert isinstance(seen[-1], RunErrorEvent)
    assert seen[-1].code == "NotAuthenticated"


def test_an_agent_token_is_refused(world: World) -> None:
    ask(world.store)
    with httpx.Client(base_url=world.server.url, headers={"Authorization": f"Bearer {world.bot}"}) as client:
        response = client.post("/agui", json=run_body())
    assert response.status_code == 403
    assert "only people decide" in response.json()["error"]["message"]
    assert any(entry.action == "access.refused" for entry in world.store.audit_entries())


def test_no_credential_is_401(world: World) -> None:
    with httpx.Client(base_url=world.server.url) as client:
        assert client.post("/agui", json=run_body()).status_code == 401


def test_a_person_sees_only_what_they_may_decide(world: World) -> None:
    carol = world.server.user("carol")
    admin = world.server.user("admin", "admin")
    ask(world.store, approvers=("alice",))
    for token in (carol, admin):
        events = run(world.server, token, run_body())
        assert types(events) == ["RUN_STARTED", "RUN_FINISHED"]
    assert len(interrupts(run(world.server, world.alice, run_body()))) == 1


def test_a_request_decided_while_the_run_is_open_leaves_its_interrupt(world: World) -> None:
    pending = ask(world.store)
    draft = ask(world.store, drafting=True)
    seen: list[object] = []

    def elsewhere() -> None:
        while not any(isinstance(event, ToolCallStartEvent) for event in seen[2:]):
            time.sleep(0.01)
        world.store.decide(pending.id, Approve(), actor="alice", channel="web")
        time.sleep(0.3)
        world.store.update_draft(draft.id, ready=True, actor="bot")

    thread = threading.Thread(target=elsewhere)
    thread.start()
    for event in stream_events(world.server, world.alice, run_body()):
        seen.append(event)
    thread.join(10)
    call_id = f"{pending.tool_call_id}~{pending.id}"
    assert results(seen)[call_id]["status"] == "approved"  # type: ignore[arg-type]
    assert [item.metadata["signoff"]["request_id"] for item in interrupts(seen)] == [draft.id]  # type: ignore[arg-type]


def test_a_run_holds_the_newest_requests_up_to_its_cap(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    from signoff.server.agui import visible

    monkeypatch.setattr(visible, "PAGE", 2)
    monkeypatch.setattr(visible, "MAX_CALLS", 3)
    asked = [ask(world.store, approvers=("carol",) if index == 3 else ()) for index in range(6)]
    events = run(world.server, world.alice, run_body())
    shown = [item.metadata["signoff"]["request_id"] for item in interrupts(events)]
    assert shown == [asked[1].id, asked[2].id, asked[4].id, asked[5].id][-3:]
