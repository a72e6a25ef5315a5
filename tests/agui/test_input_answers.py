"""A question asked with `gate.ask(question, schema=...)` takes its answer as a plain object, as
CopilotKit's `respond({taskId, priority})` sends it (a tool message or a resume entry), checked
against the question's schema; an answer that breaks the schema decides nothing. A plain object
for a tool call's approval is ambiguous and refused, saying what a tool call takes."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from ag_ui.core import RunErrorEvent, ToolMessage

from signoff import Client, Gate, Outcome, Scope
from signoff.requests import Request, RequestStatus

from .conftest import World
from .support import ask, interrupts, results, run, run_body, types

SCHEMA = {
    "type": "object",
    "properties": {"taskId": {"type": "string"}, "priority": {"enum": ["low", "normal", "high"]}},
    "required": ["taskId", "priority"],
    "additionalProperties": False,
}
ANSWER = {"taskId": "T-42", "priority": "high"}


class Question:
    """`gate.ask` waiting in a thread, as an agent's process does, for the answer."""

    def __init__(self, world: World, text: str, thread: str) -> None:
        self.outcome: Outcome | None = None
        self.client = Client(world.server.url, world.bot)
        gate = Gate(self.client, rules=None)
        self._thread = threading.Thread(
            target=self._ask, args=(gate, text, Scope(thread_id=thread)), daemon=True
        )
        self._thread.start()
        self.request = _wait_for_question(world, thread)

    def _ask(self, gate: Gate, text: str, scope: Scope) -> None:
        self.outcome = gate.ask(text, schema=SCHEMA, scope=scope, timeout=30)

    def answered(self) -> Outcome:
        self._thread.join(30)
        assert self.outcome is not None, "gate.ask is still waiting"
        return self.outcome


def _wait_for_question(world: World, thread: str) -> Request:
    give_up = time.monotonic() + 15
    while time.monotonic() < give_up:
        found = [r for r in world.store.list_requests(thread_id=thread) if r.status is RequestStatus.PENDING]
        if found:
            return found[0]
        time.sleep(0.02)
    raise AssertionError("the question never arrived")


@pytest.fixture
def question(world: World) -> Iterator[Question]:
    asked = Question(world, "Which task, and how urgent?", "intake")
    yield asked
    world.store.cancel_thread("intake", actor="test", channel="test", created_by="bot")  # frees gate.ask
    asked.answered()
    asked.client.close()


def interrupt_of(world: World, request: Request) -> Any:
    for interrupt in interrupts(run(world.server, world.alice, run_body())):
        if interrupt.metadata["signoff"]["request_id"] == request.id:
            return interrupt
    raise AssertionError(f"no interrupt for {request.id}")


def test_a_plain_object_in_a_tool_message_answers_the_question(world: World, question: Question) -> None:
    interrupt = interrupt_of(world, question.request)
    reply = ToolMessage(id="m-1", tool_call_id=interrupt.id, content=json.dumps(ANSWER))
    events = run(world.server, world.alice, run_body(messages=[reply]))
    assert "RUN_ERROR" not in types(events)
    assert results(events)[interrupt.id]["status"] == "responded"
    outcome = question.answered()
    assert outcome.decision == "respond"
    assert outcome.tool_result == ANSWER
    decided = world.store.get_request(question.request.id)
    assert decided.decision is not None
    assert (decided.decision.actor, decided.decision.channel) == ("alice", "agui")


def test_a_plain_object_in_a_resume_entry_answers_it_too(world: World, question: Question) -> None:
    interrupt = interrupt_of(world, question.request)
    resume = [{"interruptId": interrupt.id, "status": "resolved", "payload": ANSWER}]
    events = run(world.server, world.alice, run_body(resume=resume))
    assert "RUN_ERROR" not in types(events)
    assert question.answered().tool_result == ANSWER


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ({"taskId": "T-42", "priority": "urgent"}, "urgent"),
        ({"taskId": "T-42"}, "priority"),
        ({"taskId": "T-42", "priority": "low", "owner": "bob"}, "owner"),
    ],
)
def test_an_answer_that_breaks_the_schema_decides_nothing_in_the_run(
    world: World, question: Question, answer: dict[str, Any], said: str
) -> None:
    tool_call = ask(world.store)
    found = {
        item.metadata["signoff"]["request_id"]: item.id
        for item in interrupts(run(world.server, world.alice, run_body()))
    }
    resume = [
        {"interruptId": found[tool_call.id], "status": "resolved", "payload": "approved"},
        {"interruptId": found[question.request.id], "status": "resolved", "payload": answer},
    ]
    events = run(world.server, world.alice, run_body(resume=resume))
    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
    error = events[-1]
    assert isinstance(error, RunErrorEvent)
    assert said in error.message and found[question.request.id] in error.message
    assert world.store.get_request(question.request.id).status is RequestStatus.PENDING
    assert world.store.get_request(tool_call.id).status is RequestStatus.PENDING  # nothing decided


def test_a_plain_object_for_a_tool_call_is_refused_saying_what_it_takes(world: World) -> None:
    tool_call = ask(world.store, tool="send_email")
    (interrupt,) = interrupts(run(world.server, world.alice, run_body()))
    for sent in (
        {
            "resume": [
                {"interruptId": interrupt.id, "status": "resolved", "payload": {"to": "eve@example.com"}}
            ]
        },
        {"messages": [ToolMessage(id="m-2", tool_call_id=interrupt.id, content='{"ok": 1}')]},
    ):
        events = run(world.server, world.alice, run_body(**sent))  # type: ignore[arg-type]
        assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
        error = events[-1]
        assert isinstance(error, RunErrorEvent)
        assert "answers only a question" in error.message
        assert '"approved" or "denied"' in error.message  # what a tool call takes
    assert world.store.get_request(tool_call.id).status is RequestStatus.PENDING


def test_declining_the_question_still_works(world: World, question: Question) -> None:
    interrupt = interrupt_of(world, question.request)
    resume = [
        {"interruptId": interrupt.id, "status": "resolved", "payload": {"approved": False, "reason": "n/a"}}
    ]
    run(world.server, world.alice, run_body(resume=resume))
    assert question.answered().decision == "reject"


def test_the_response_schema_advertises_the_plain_answer_for_a_question_only(
    world: World, question: Question
) -> None:
    tool_call = ask(world.store)
    schemas = {
        item.metadata["signoff"]["request_id"]: item.response_schema
        for item in interrupts(run(world.server, world.alice, run_body()))
    }
    jsonschema.validate(ANSWER, schemas[question.request.id])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"taskId": "T-42", "priority": "urgent"}, schemas[question.request.id])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(ANSWER, schemas[tool_call.id])
