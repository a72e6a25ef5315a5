"""Resuming a session that signoff paused: the `adk_request_confirmation` responses it takes.

ADK keeps a paused call's confirmation request (`adk_request_confirmation`, its payload naming
signoff's request) in the session's events. Once signoff's decision is in, the run goes on with
that call's function response; the plugin then reads the decision from signoff's store (the
response only says "signoff decided", confirmed for ADK whatever the decision, so that ADK's own
rejection does not hide signoff's text).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from google.adk.events import Event
from google.adk.runners import Runner
from google.adk.sessions import Session
from google.genai import types

from signoff import Gate, Pending, ToolCall

from .._scope import ScopeDefaults
from .results import PAUSED, SIGNOFF_KEY
from .scope import session_scope

CONFIRMATION = "adk_request_confirmation"


@dataclass(frozen=True)
class Decided:
    """A paused session's signoff calls: the confirmation responses of those decided, and those
    still waiting for a person."""

    responses: list[types.Part] = field(default_factory=list)
    pending: list[Pending] = field(default_factory=list)


@dataclass(frozen=True)
class Resumed:
    """Where a resumed session stands: the events of the run that went on, or `pending`."""

    events: list[Event] = field(default_factory=list)
    pending: list[Pending] = field(default_factory=list)

    @property
    def paused(self) -> bool:
        """Still undecided, or paused again (a later call of the run asks)."""
        return bool(self.pending) or any(event.long_running_tool_ids for event in self.events)


def open_confirmations(session: Session) -> list[types.FunctionCall]:
    """The session's `adk_request_confirmation` calls whose original call has no result yet but
    signoff's placeholder (ADK writes the placeholder before or after the request)."""
    answered: set[str] = set()
    found: dict[str, types.FunctionCall] = {}  # the original call's id → its last confirmation
    for event in session.events:
        for response in event.get_function_responses():
            if response.id and response.response != PAUSED:
                answered.add(response.id)
        for call in event.get_function_calls():
            original = (call.args or {}).get("originalFunctionCall") or {}
            if call.name == CONFIRMATION and original.get("id"):
                found[original["id"]] = call
    return [call for original, call in found.items() if original not in answered]


async def decided(gate: Gate, session: Session, defaults: ScopeDefaults) -> Decided:
    scope = session_scope(session, defaults)
    found = Decided()
    for confirmation in open_confirmations(session):
        args = confirmation.args or {}
        original = args.get("originalFunctionCall") or {}
        payload = (args.get("toolConfirmation") or {}).get("payload")
        if not isinstance(payload, dict) or SIGNOFF_KEY not in payload:
            continue  # not paused by signoff: left to the caller
        asked = ToolCall(
            name=original.get("name") or "", args=dict(original.get("args") or {}), id=original.get("id")
        )
        result = await gate.asubmit(asked, scope, resumed=True)
        if isinstance(result, Pending):
            found.pending.append(result)
            continue
        signoff = {"request_id": result.request_id, "decision": result.decision, "status": result.status}
        response = types.FunctionResponse(
            id=confirmation.id,
            name=CONFIRMATION,
            response={"confirmed": True, "payload": {SIGNOFF_KEY: signoff}},
        )
        found.responses.append(types.Part(function_response=response))
    return found


async def resume(
    gate: Gate, defaults: ScopeDefaults, runner: Runner, *, user_id: str, session_id: str, **run_options: Any
) -> Resumed:
    session = await runner.session_service.get_session(
        app_name=runner.app_name, user_id=user_id, session_id=session_id
    )
    if session is None:
        raise LookupError(f"no session {session_id!r} of user {user_id!r} in app {runner.app_name!r}")
    found = await decided(gate, session, defaults)
    if found.pending:
        return Resumed(pending=found.pending)
    if not found.responses:
        raise LookupError(
            f"session {session_id!r} has no call paused by signoff: nothing to resume "
            "(its run went on already, or something else paused it)"
        )
    message = types.Content(role="user", parts=found.responses)
    events = [
        event
        async for event in runner.run_async(
            user_id=user_id, session_id=session_id, new_message=message, **run_options
        )
    ]
    return Resumed(events=events)
