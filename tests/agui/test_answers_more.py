"""The inbox's session works as the API token does; quorum votes, redacted args, CopilotKit's
tool-message shapes, and the `tool_calls` outcome for useHumanInTheLoop front ends."""

from __future__ import annotations

import json
from datetime import timedelta

import httpx
from ag_ui.core import RunFinishedEvent

from signoff._util import utcnow
from signoff.requests import NewRequest, RequestStatus
from signoff.rules.effective import RequestRule
from signoff.server.access import SESSION_COOKIE

from .conftest import World
from .support import ask, call_args, history, interrupts, results, run, run_body, types


def test_the_inbox_session_with_its_csrf_token_runs_as_its_person(world: World) -> None:
    request = ask(world.store)
    session, _ = world.store.issue_credential("session", "alice", actor="test")
    found = world.store.session_of(session)
    assert found is not None
    csrf = found[1]
    cookies = {SESSION_COOKIE: session}
    with httpx.Client(base_url=world.server.url, cookies=cookies) as client:
        refused = client.post("/agui", json=run_body())
    assert refused.status_code == 403
    assert "CSRF" in refused.json()["error"]["message"]
    first = run(world.server, None, run_body(), cookies=cookies, headers={"X-CSRF-Token": csrf})
    (interrupt,) = interrupts(first)
    resume = [{"interruptId": interrupt.id, "status": "resolved", "payload": "approved"}]
    run(world.server, None, run_body(resume=resume), cookies=cookies, headers={"X-CSRF-Token": csrf})
    decided = world.store.get_request(request.id)
    assert decided.status is RequestStatus.APPROVED
    assert decided.decision is not None
    assert (decided.decision.actor, decided.decision.channel) == ("alice", "agui")


def test_a_quorum_vote_is_counted_and_the_voter_is_not_asked_again(world: World) -> None:
    bob = world.server.user("bob")
    request, _ = world.store.create_request(
        NewRequest(
            thread_id="t",
            tool_call_id="c",
            tool_name="wire",
            args={"amount": 1000},
            description="Wire money",
            deadline=utcnow() + timedelta(hours=1),
            rule=RequestRule(quorum=2),
            actor="bot",
        )
    )
    (interrupt,) = interrupts(run(world.server, world.alice, run_body()))
    assert "editedArgs" not in json.dumps(interrupt.response_schema)  # a quorum approves or rejects
    voted = run(
        world.server,
        world.alice,
        run_body(resume=[{"interruptId": interrupt.id, "status": "resolved", "payload": True}]),
    )
    result = results(voted)[interrupt.id]
    assert result["status"] == "pending"
    assert "1 more approval(s) needed" in result["message"]
    assert not interrupts(voted)  # alice has voted: nothing left for her
    assert len(interrupts(run(world.server, bob, run_body()))) == 1
    run(
        world.server,
        bob,
        run_body(resume=[{"interruptId": interrupt.id, "status": "resolved", "payload": "approved"}]),
    )
    assert world.store.get_request(request.id).status is RequestStatus.APPROVED


def test_redacted_args_are_shown_masked_and_kept_when_sent_back_masked(world: World) -> None:
    request, _ = world.store.create_request(
        NewRequest(
            thread_id="t",
            tool_call_id="c",
            tool_name="login",
            args={"user": "root", "password": "hunter2"},
            description="Log in",
            deadline=utcnow() + timedelta(hours=1),
            rule=RequestRule(redact=("password",)),
            actor="bot",
        )
    )
    first = run(world.server, world.alice, run_body())
    (interrupt,) = interrupts(first)
    assert call_args(first)[interrupt.id] == {"user": "root", "password": "***"}
    assert "hunter2" not in json.dumps([event.model_dump(mode="json") for event in first])
    edit = {"approved": True, "editedArgs": {"user": "admin", "password": "***"}}
    run(
        world.server,
        world.alice,
        run_body(resume=[{"interruptId": interrupt.id, "status": "resolved", "payload": edit}]),
    )
    assert world.store.get_request(request.id).final_args == {"user": "admin", "password": "hunter2"}


def test_tool_calls_outcome_names_the_calls_for_frontend_tools(world: World) -> None:
    ask(world.store)
    events = run(world.server, world.alice, run_body(props={"outcome": "tool_calls"}))
    last = events[-1]
    assert isinstance(last, RunFinishedEvent)
    assert last.outcome is not None
    assert last.outcome.type == "success"
    call_id = next(iter(call_args(events)))
    assert last.outcome.pending_tool_call_ids == [call_id]


def test_copilotkit_respond_shapes_in_tool_messages(world: World) -> None:
    """respond() sends a string as it is and anything else JSON.stringify'd; parts are joined."""
    requests = [ask(world.store) for _ in range(3)]
    first = run(world.server, world.alice, run_body(props={"outcome": "tool_calls"}))
    ids = list(call_args(first))
    replies = [
        {"id": "r1", "role": "tool", "toolCallId": ids[0], "content": "approved"},
        {
            "id": "r2",
            "role": "tool",
            "toolCallId": ids[1],
            "content": json.dumps({"approved": False, "reason": "no"}),
        },
        {
            "id": "r3",
            "role": "tool",
            "toolCallId": ids[2],
            "content": [{"type": "text", "text": "tr"}, {"type": "text", "text": "ue"}],
        },
    ]
    second = run(
        world.server,
        world.alice,
        run_body(messages=[*history(first), *replies], props={"outcome": "tool_calls"}),
    )
    statuses = [world.store.get_request(request.id).status for request in requests]
    assert statuses == [RequestStatus.APPROVED, RequestStatus.REJECTED, RequestStatus.APPROVED]
    assert set(results(second)) == set(ids)
    # The next run's history holds the answers and signoff's results: nothing is decided twice.
    third = run(world.server, world.alice, run_body(messages=[*history(first), *replies, *history(second)]))
    assert types(third) == ["RUN_STARTED", "RUN_FINISHED"]
    rejected = world.store.get_request(requests[1].id)
    assert rejected.decision is not None
    assert rejected.decision.to_dict()["message"] == "no"
