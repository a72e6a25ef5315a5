"""Decisions from the app's own UI: a stock `{"decisions": [...]}` resume value, applied in signoff.

Only with `SignoffMiddleware(accept_resume_decisions=True, actor="...")` (in `interrupt_mode=
"per_call"`, a single stock decision per interrupt, keyed by its id); without it such a value
is ignored like any other and signoff's decisions stand. The value is checked while LangGraph
reads it (the interrupt's `response_schema`), so a value that does not fit raises a
`pydantic.ValidationError` naming every problem, decides nothing and is not saved: the thread
stays answerable, with every call still pending. Each decision is checked as the store checks
one (the rule's allowed decisions, the edit's args schema, the approvers), by position against
the interrupt's calls, as the stock middleware matches them.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, WithJsonSchema

from signoff import AlreadyDecided, Backend, Decision, Request, RequestExpired, SignoffError, parse_decision

from .._checks import applied_already, check_decision

RESUME_CHANNEL = "langchain"
"""The channel decisions from a resume value are recorded under."""
HITL_RESPONSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"decisions": {"type": "array", "items": {"type": "object"}}},
    "required": ["decisions"],
}
DECISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"type": {"enum": ["approve", "edit", "reject", "respond"]}},
    "required": ["type"],
}
"""A per-call resume value: one stock decision (`{"type": "approve"}`...)."""


def stock_decisions(value: Any) -> Any:
    """The `decisions` of a stock `HITLResponse`, or None for any other value (`True`...)."""
    if isinstance(value, dict) and "decisions" in value:
        return value["decisions"]
    return None


@dataclass(frozen=True)
class ResumeDecisions:
    """The decisions a resume value may carry for one interrupt: one per request, in order."""

    store: Backend
    actor: str
    requests: Sequence[Request]
    per_call: bool = False
    """One request, answered by one stock decision (`interrupt_mode="per_call"`), not a list."""

    def schema(self) -> Any:
        """The interrupt's `response_schema`: any value passes; a stock decisions value must fit."""
        shown = DECISION_SCHEMA if self.per_call else HITL_RESPONSE_SCHEMA
        return Annotated[Any, AfterValidator(self._check), WithJsonSchema(shown)]

    def _check(self, value: Any) -> Any:
        if (raw := self._decisions(value)) is not None:
            self.parse(raw)
        return value

    def _decisions(self, value: Any) -> Any:
        """The stock decisions a resume value carries, or None for any other value (`True`...)."""
        if self.per_call:
            return [value] if isinstance(value, dict) and "type" in value else None
        return stock_decisions(value)

    def parse(self, raw: Any) -> list[tuple[Request, Decision | None]]:
        """Each request with its decision, None where signoff has one already (this very decision,
        recorded before a re-run of the node, or one made in signoff since the interrupt's calls
        were read: the first decision wins); ValueError naming every decision that does not fit."""
        if not isinstance(raw, list):
            raise ValueError(f"`decisions` must be a list, got {type(raw).__name__}")
        if len(raw) != len(self.requests):
            raise ValueError(
                f"Number of human decisions ({len(raw)}) does not match number of hanging tool "
                f"calls ({len(self.requests)}); nothing was decided"
            )
        parsed: list[tuple[Request, Decision | None]] = []
        problems: list[str] = []
        for position, (waiting, item) in enumerate(zip(self.requests, raw, strict=True)):
            request = self.store.get_request(waiting.id)
            try:
                decision = parse_decision(item, tool_name=request.tool_name)
                if request.is_terminal or applied_already(
                    request, decision, actor=self.actor, channel=RESUME_CHANNEL
                ):
                    parsed.append((request, None))
                    continue
                check_decision(self.store, request, decision, actor=self.actor)
            except SignoffError as exc:
                problems.append(f"decision {position} ({request.tool_name}, {request.tool_call_id}): {exc}")
                continue
            parsed.append((request, decision))
        if problems:
            raise ValueError("resume decisions refused, nothing was decided: " + "; ".join(problems))
        return parsed

    def apply(self, value: Any) -> None:
        """Record a checked value's decisions. The value is saved by then, so nothing here may
        refuse it: a request decided, cancelled or expired meanwhile keeps what signoff has."""
        if (raw := self._decisions(value)) is None:
            return
        for waiting, item in zip(self.requests, raw, strict=True):
            request = self.store.get_request(waiting.id)
            decision = parse_decision(item, tool_name=request.tool_name)
            if request.is_terminal or applied_already(
                request, decision, actor=self.actor, channel=RESUME_CHANNEL
            ):
                continue
            with suppress(AlreadyDecided, RequestExpired):
                self.store.decide(request.id, decision, actor=self.actor, channel=RESUME_CHANNEL)
