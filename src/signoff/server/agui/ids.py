"""The AG-UI ids of signoff's requests: tool calls, interrupts, their messages.

A model's `tool_call_id` is unique only within one agent's thread (two agents both have a
`call_1`), and an AG-UI page shows the requests of every agent it may decide. So a request's
toolCallId is its `tool_call_id`, then `~`, then the signoff request id: `call_1~req_01K…`. It
starts with the id the agent's own model gave, it is unique (request ids are), and it reverses
without a lookup table: the request id is what follows the last `~` (request ids never hold
one), and the part before it must be that request's `tool_call_id`. A request without a
`tool_call_id` is known by its request id alone. Each request is one interrupt, with the same id.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from ...requests import Request

SEPARATOR = "~"
RESULT_PREFIX = "signoff-result~"
"""The id of the tool message a TOOL_CALL_RESULT mints: ours, never an answer."""
REQUEST_PREFIX = "req_"


def tool_call_id_of(request: Request) -> str:
    if not request.tool_call_id:
        return request.id
    return f"{request.tool_call_id}{SEPARATOR}{request.id}"


@dataclass(frozen=True)
class CallRef:
    """A toolCallId (or interrupt id) read back: the request it names, and the tool_call_id it claims."""

    request_id: str
    tool_call_id: str | None

    def matches(self, request: Request) -> bool:
        if self.tool_call_id is None:
            return not request.tool_call_id
        return request.tool_call_id == self.tool_call_id


def parse_tool_call_id(value: str) -> CallRef | None:
    """The request a toolCallId names, or None when it is not one of signoff's."""
    head, sep, tail = value.rpartition(SEPARATOR)
    if not sep:
        return CallRef(value, None) if value.startswith(REQUEST_PREFIX) else None
    if not tail.startswith(REQUEST_PREFIX) or not head:
        return None
    return CallRef(tail, head)


def result_message_id(request: Request) -> str:
    return RESULT_PREFIX + request.id


def is_result_message(message_id: str) -> bool:
    return message_id.startswith(RESULT_PREFIX)


def parent_message_id(request: Request) -> str:
    """One assistant message per agent conversation (its creator and thread): the calls of one
    agent's thread show together, and no two agents' threads share a message."""
    digest = hashlib.sha256(f"{request.created_by or ''}\0{request.thread_id}".encode()).hexdigest()
    return f"signoff-thread~{digest[:24]}"
