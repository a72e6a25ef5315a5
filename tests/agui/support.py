"""Running AG-UI runs against a live server, and reading their events back with `ag_ui.core`."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from pydantic import TypeAdapter

from signoff._util import utcnow
from signoff.requests import NewRequest, Request
from signoff.rules.effective import RequestRule
from signoff.store import Store

from ..live import LiveServer

pytest.importorskip("ag_ui", reason="the AG-UI tests need the agui extra: pip install 'signoff[agui]'")

from ag_ui.core import (
    AssistantMessage,
    BaseEvent,
    Event,
    FunctionCall,
    RunFinishedEvent,
    ToolCall,
    ToolCallArgsEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
    ToolMessage,
)

EVENTS: TypeAdapter[BaseEvent] = TypeAdapter(Event)


def ask(
    store: Store,
    *,
    tool: str = "send_email",
    args: dict[str, Any] | None = None,
    thread: str = "t1",
    call: str | None = None,
    agent: str | None = "mailer",
    approvers: tuple[str, ...] = (),
    allowed: tuple[str, ...] | None = None,
    drafting: bool = False,
    created_by: str = "bot",
    deadline: timedelta = timedelta(hours=1),
    args_schema: dict[str, Any] | None = None,
) -> Request:
    """A request created as the agent `created_by` would (straight in the store)."""
    rule = RequestRule(approvers=approvers)
    if allowed is not None:
        rule = RequestRule(approvers=approvers, allowed_decisions=allowed)  # type: ignore[arg-type]
    request, _ = store.create_request(
        NewRequest(
            thread_id=thread,
            tool_call_id=call or f"call_{uuid.uuid4().hex[:8]}",
            tool_name=tool,
            args=args if args is not None else {"to": "bob@example.com", "subject": "hi"},
            description=f"Call {tool}",
            deadline=utcnow() + deadline,
            rule=rule,
            agent=agent,
            args_schema=args_schema,
            drafting=drafting,
            actor=created_by,
            channel="test",
        )
    )
    return request


def run_body(
    *,
    thread: str = "page",
    messages: list[Any] | None = None,
    resume: list[dict[str, Any]] | None = None,
    props: dict[str, Any] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "threadId": thread,
        "runId": f"run-{uuid.uuid4().hex[:8]}",
        "messages": [_jsonable(message) for message in messages or []],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {"signoff": props} if props is not None else {},
    }
    if resume is not None:
        body["resume"] = resume
    return body


def _jsonable(message: Any) -> Any:
    if hasattr(message, "model_dump"):
        return message.model_dump(mode="json", by_alias=True)
    return message


def stream_events(
    server: LiveServer, token: str | None, body: dict[str, Any], **kwargs: Any
) -> Iterator[BaseEvent]:
    """The run's events as they come, each parsed back into its `ag_ui.core` model."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    headers.update(kwargs.pop("headers", {}))
    with (
        httpx.Client(
            base_url=server.url, headers=headers, timeout=httpx.Timeout(30, read=60), **kwargs
        ) as client,
        client.stream("POST", "/agui", json=body, headers={"Accept": "text/event-stream"}) as response,
    ):
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("data:"):
                yield EVENTS.validate_python(json.loads(line[5:]))


def run(server: LiveServer, token: str | None, body: dict[str, Any], **kwargs: Any) -> list[BaseEvent]:
    return list(stream_events(server, token, body, **kwargs))


def types(events: list[BaseEvent]) -> list[str]:
    return [event.type.value for event in events]


def finished(events: list[BaseEvent]) -> RunFinishedEvent:
    last = events[-1]
    assert isinstance(last, RunFinishedEvent), types(events)
    return last


def interrupts(events: list[BaseEvent]) -> list[Any]:
    outcome = finished(events).outcome
    return list(outcome.interrupts) if outcome is not None and outcome.type == "interrupt" else []


def results(events: list[BaseEvent]) -> dict[str, dict[str, Any]]:
    """Each TOOL_CALL_RESULT's content, by toolCallId."""
    return {
        event.tool_call_id: json.loads(event.content)
        for event in events
        if isinstance(event, ToolCallResultEvent)
    }


def history(events: list[BaseEvent]) -> list[Any]:
    """The messages a client keeps from a run: an assistant message per parent with its calls
    (args joined from the deltas), and the results as tool messages."""
    calls: dict[str, dict[str, Any]] = {}
    parents: dict[str, list[str]] = {}
    messages: list[Any] = []
    for event in events:
        if isinstance(event, ToolCallStartEvent):
            calls.setdefault(event.tool_call_id, {"name": event.tool_call_name, "args": ""})
            parents.setdefault(event.parent_message_id or event.tool_call_id, []).append(event.tool_call_id)
        elif isinstance(event, ToolCallArgsEvent):
            calls[event.tool_call_id]["args"] += event.delta
    for parent, ids in parents.items():
        tool_calls = [
            ToolCall(id=i, function=FunctionCall(name=calls[i]["name"], arguments=calls[i]["args"]))
            for i in ids
        ]
        messages.append(AssistantMessage(id=parent, tool_calls=tool_calls))
    for event in events:
        if isinstance(event, ToolCallResultEvent):
            messages.append(
                ToolMessage(id=event.message_id, tool_call_id=event.tool_call_id, content=event.content)
            )
    return messages


def call_args(events: list[BaseEvent]) -> dict[str, Any]:
    """Each tool call's args, parsed from its joined deltas, by toolCallId."""
    joined: dict[str, str] = {}
    for event in events:
        if isinstance(event, ToolCallArgsEvent):
            joined[event.tool_call_id] = joined.get(event.tool_call_id, "") + event.delta
    return {key: json.loads(value) for key, value in joined.items()}
