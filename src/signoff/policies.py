"""Programmatic "when to ask" policies (Haystack's), applied after the rules say a call may ask.

`AskOnce` and `AskOncePerTool` remember approvals in the store, per scope, so the memory
survives restarts and is shared by every process using the same database.
"""

from __future__ import annotations

import hashlib
from typing import Any, Protocol, Self, runtime_checkable

from ._util import canonical_json
from .calls import Scope, ToolCall
from .outcome import Outcome
from .saved import init_parameters, saved

SCOPE_FIELDS = ("app", "agent", "requester", "thread_id")


class PolicyMemory(Protocol):
    """Where stateful policies keep what they learned (the store implements it)."""

    def remember(self, scope_key: str, fingerprint: str) -> None: ...

    def recall(self, scope_key: str, fingerprint: str) -> bool: ...


@runtime_checkable
class Policy(Protocol):
    """Decides, call by call, whether a person is asked about a gated call (`Gate(..., policy=...)`)."""

    def should_ask(self, call: ToolCall, scope: Scope, memory: PolicyMemory) -> bool:
        """Ask a person about this call?"""
        ...

    def after_decision(self, call: ToolCall, scope: Scope, outcome: Outcome, memory: PolicyMemory) -> None:
        """Learn from what the person decided."""
        ...


def learn_from(policy: Policy, call: ToolCall, scope: Scope, outcome: Outcome, memory: PolicyMemory) -> None:
    """Tell a policy what the person decided, if it wants to know: `after_decision` is optional,
    as `update_after_confirmation` is in Haystack."""
    hook = getattr(policy, "after_decision", None)
    if hook is not None:
        hook(call, scope, outcome, memory)


class _Stateless:
    """A policy without constructor arguments, saved as Haystack saves its policies."""

    def to_dict(self) -> dict[str, Any]:
        return saved(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        return cls(**init_parameters(cls, data))


class AlwaysAsk(_Stateless):
    """Ask every time (the default)."""

    def should_ask(self, call: ToolCall, scope: Scope, memory: PolicyMemory) -> bool:
        return True

    def after_decision(self, call: ToolCall, scope: Scope, outcome: Outcome, memory: PolicyMemory) -> None:
        return None


class NeverAsk(_Stateless):
    """Never ask: keeps the rules and UI configured while switching asking off
    (the app's `hitl_required` still asks)."""

    def should_ask(self, call: ToolCall, scope: Scope, memory: PolicyMemory) -> bool:
        return False

    def after_decision(self, call: ToolCall, scope: Scope, outcome: Outcome, memory: PolicyMemory) -> None:
        return None


class AskOnce:
    """Once a tool with the same args is approved in a scope, don't ask again in that scope.

    `per` names the scope fields that make a scope: by default app, agent and requester, so an
    approval holds across runs (threads) of the same end user; add "thread_id" to forget it with
    each run.
    """

    kind = "askonce"

    def __init__(self, per: tuple[str, ...] = ("app", "agent", "requester")) -> None:
        unknown = set(per) - set(SCOPE_FIELDS)
        if unknown:
            raise ValueError(f"unknown scope fields {sorted(unknown)}; use {', '.join(SCOPE_FIELDS)}")
        self.per = tuple(per)

    def to_dict(self) -> dict[str, Any]:
        """Its settings, as Haystack saves a policy (what it learned is in the store, not here)."""
        return saved(self, per=list(self.per))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        parameters = init_parameters(cls, data)
        if "per" in parameters:
            parameters["per"] = tuple(parameters["per"])
        return cls(**parameters)

    def scope_key(self, scope: Scope) -> str:
        return f"{self.kind}:" + canonical_json({name: getattr(scope, name) for name in self.per})

    def fingerprint(self, call: ToolCall) -> str:
        return hashlib.sha256(canonical_json([call.name, call.args]).encode()).hexdigest()

    def should_ask(self, call: ToolCall, scope: Scope, memory: PolicyMemory) -> bool:
        return not memory.recall(self.scope_key(scope), self.fingerprint(call))

    def after_decision(self, call: ToolCall, scope: Scope, outcome: Outcome, memory: PolicyMemory) -> None:
        if outcome.decision == "approve":
            memory.remember(self.scope_key(scope), self.fingerprint(call))


class AskOncePerTool(AskOnce):
    """Once a tool is approved in a scope, whatever its args, don't ask about it again there."""

    kind = "askoncepertool"

    def fingerprint(self, call: ToolCall) -> str:
        return call.name
