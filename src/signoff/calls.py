"""What the agent wants to do (`ToolCall`) and where it happens (`Scope`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """One call a model asked for: the tool's name, its arguments, and what we know of the tool."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    """The model's tool_call_id. With `Scope.thread_id` it is the request's idempotency key."""
    description: str | None = None
    schema: dict[str, Any] | None = None
    """The JSON Schema of `args`, when known. Edited args are validated against it."""
    round: str | None = None
    """The model turn that asked for the call (its message or response id). An unattended run's
    cap counts rounds: the calls of one turn are one auto-resume. None: the call is a round alone."""
    annotations: Mapping[str, Any] | None = None
    """What the tool says of itself (MCP's `readOnlyHint`, `destructiveHint`, `idempotentHint`,
    `openWorldHint`, `title`): `tool_annotations` in `when` conditions; a service with
    `approval_mode: unless_read_only` does not ask about a tool marked `readOnlyHint: true`."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError("ToolCall.name must be a non-empty string")
        if not isinstance(self.args, dict):
            raise TypeError(f"ToolCall.args must be a JSON object (dict), got {type(self.args).__name__}")
        if self.annotations is not None and not isinstance(self.annotations, Mapping):
            raise TypeError(f"ToolCall.annotations must be a mapping, got {type(self.annotations).__name__}")


@dataclass(frozen=True, kw_only=True)
class Scope:
    """Where a call happens. A sub-agent's tools are named `subagent.tool`."""

    thread_id: str = "default"
    """The conversation or run; replays of a run use the same thread_id."""
    agent: str | None = None
    app: str | None = None
    requester: str | None = None
    """The end user the agent acts for."""
    unattended: bool = False
    """A run with nobody to ask (cron)."""
    client: str | None = None
    """The program the agent runs in, as it names itself (an MCP client's `clientInfo.name`):
    recorded on the request and shown to people, never used to choose rules (the caller could
    say anything)."""
