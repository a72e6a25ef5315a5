"""Each decision type, answered through `resume` entries and through tool messages."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from signoff.requests import RequestStatus

from .conftest import World
from .support import ask, history, interrupts, results, run, run_body, types

ANSWERS: list[tuple[Any, RequestStatus]] = [
    ("approved", RequestStatus.APPROVED),
    (True, RequestStatus.APPROVED),
    ({"approved": True, "reason": "fine"}, RequestStatus.APPROVED),
    ("denied", RequestStatus.REJECTED),
    (False, RequestStatus.REJECTED),
    ({"approved": False, "reason": "not today"}, RequestStatus.REJECTED),
    ({"approved": True, "editedArgs": {"to": "carol@example.com", "subject": "hi"}}, RequestStatus.EDITED),
    ({"type": "edit", "args": {"to": "dan@example.com", "subject": "yo"}}, RequestStatus.EDITED),
    ({"type": "respond", "message": "Already sent it myself."}, RequestStatus.RESPONDED),
    ({"type": "reject", "message": "no"}, RequestStatus.REJECTED),
]


@pytest.mark.parametrize(("answer", "status"), ANSWERS)
@pytest.mark.parametrize("way", ["resume", "tool message"])
def test_round_trip(world: World, answer: Any, status: RequestStatus, way: str) -> None:
    request = ask(world.store)
    first = run(world.server, world.alice, run_body())
    (interrupt,) = interrupts(first)
    if way == "resume":
        body = run_body(
            messages=history(first),
            resume=[{"interruptId": interrupt.id, "status": "resolved", "payload": answer}],
        )
    else:
        import json

        content = answer if isinstance(answer, str) else json.dumps(answer)
        reply = {"id": "m1", "role": "tool", "toolCallId": interrupt.tool_call_id, "content": content}
        body = run_body(messages=[*history(first), reply], props={"outcome": "tool_calls"})
    second = run(world.server, world.alice, body)
    decided = world.store.get_request(request.id)
    assert decided.status is status
    assert decided.decision is not None
    assert decided.decision.actor == "alice"
    assert decided.decision.channel == "agui"
    (result,) = results(second).values()
    assert result["status"] == status.value
    assert result["request_id"] == request.id
    assert types(second)[0] == "RUN_STARTED"
    assert not interrupts(second)
    if status is RequestStatus.EDITED:
        assert decided.final_args == (answer.get("editedArgs") or answer.get("args"))


def test_both_stores_list_decide_and_stream_drafts(any_world: World) -> None:
    """Listing by visibility, deciding and following a draft, on SQLite and PostgreSQL."""
    world = any_world
    mine = ask(world.store, approvers=("alice",))
    ask(world.store, approvers=("carol",))
    draft = ask(world.store, args={"to": "x"}, drafting=True)
    timer = threading.Timer(
        0.5, lambda: world.store.update_draft(draft.id, args={"to": "bob"}, ready=True, actor="bot")
    )
    timer.start()
    first = run(world.server, world.alice, run_body())
    timer.join()
    found = [item.metadata["signoff"]["request_id"] for item in interrupts(first)]
    assert found == [mine.id, draft.id]
    resume = [
        {"interruptId": item.id, "status": "resolved", "payload": "approved"} for item in interrupts(first)
    ]
    second = run(world.server, world.alice, run_body(messages=history(first), resume=resume))
    assert {result["status"] for result in results(second).values()} == {"approved"}
    assert world.store.get_request(draft.id).final_args == {"to": "bob"}
