"""`when` and `description` as Python callables, for rules declared in code.

A rule kept in the store or a file says `when` in CEL and `description` as a template; a rule
declared in code (`register_tool`, a `RuleSet` given to the gate, a framework adapter) may give
either as a callable instead. A callable cannot be stored or sent: where a rule is written down
it is refused (`refuse_callables`), and where it is reported it is named (`python_name`).

    def risky(call: WhenInput) -> bool:
        return call.args["amount"] > 1000

    gate.register_tool("transfer", ToolEntry(requires_approval=True, when=risky,
                       description=lambda call: f"Transfer {call.args['amount']} to {call.args['to']}?"))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from ..errors import ConfigError
from .conditions import ConditionResult


@dataclass(frozen=True, kw_only=True)
class WhenInput:
    """What a `when` callable is given: the names a CEL condition sees."""

    args: Mapping[str, Any]
    tool: str
    agent: str | None
    app: str | None
    requester: str | None
    tool_annotations: Mapping[str, Any] = field(default_factory=dict)
    """What the tool says of itself (MCP's `readOnlyHint`, `destructiveHint`, ...); empty when unknown."""


@dataclass(frozen=True, kw_only=True)
class DescriptionInput:
    """What a `description` callable is given: the names a CEL condition sees, with `args`
    redacted as the card shows them (the rule's `redact` names masked), and the agent's prefix."""

    args: Mapping[str, Any]
    tool: str
    agent: str | None
    app: str | None
    requester: str | None
    prefix: str
    tool_annotations: Mapping[str, Any] = field(default_factory=dict)


WhenFn: TypeAlias = Callable[[WhenInput], object]
"""Truthy: ask; falsy: don't; raising: ask (as a CEL condition that cannot be evaluated)."""
DescribeFn: TypeAlias = Callable[[DescriptionInput], str]
"""Returns the card text as it is shown (no placeholders filled; hidden characters escaped)."""

CALLABLE_FIELDS = ("when", "description")


def python_name(value: object) -> str:
    """How a callable is named where a rule is reported: `<python: module.qualname>`."""
    module = getattr(value, "__module__", None) or "?"
    qualname = getattr(value, "__qualname__", None) or type(value).__qualname__
    return f"<python: {module}.{qualname}>"


def names_a_callable(text: str) -> bool:
    """Whether a stored rule's description is a callable's name (`python_name`), not a template."""
    return text.startswith("<python: ") and text.endswith(">")


def shown(value: object) -> Any:
    """A `when` or `description` as JSON may carry it: a callable by its name."""
    return python_name(value) if callable(value) else value


def call_when(when: WhenFn, facts: WhenInput) -> ConditionResult:
    try:
        value = when(facts)
    except Exception as exc:  # the caller's code: any error asks, as a CEL error does
        return ConditionResult(True, f"raised {type(exc).__name__}: {exc}; asking")
    return ConditionResult(bool(value))


def refuse_callables(entry: Any, where: str) -> None:
    """ConfigError if the settings `entry` (a layer entry, or a switch in one) holds a callable:
    it can live only in code, never in the store, a file or a request to a server."""
    for name in CALLABLE_FIELDS:
        value = getattr(entry, name, None)
        if callable(value):
            raise _refusal(f"{where}.{name}", value)


def refuse_callables_in(data: Any, where: str) -> None:
    """`refuse_callables` for a layer entry as JSON-like data (about to be sent to a server)."""
    if callable(data):
        raise _refusal(where, data)
    if isinstance(data, Mapping):
        for key, value in data.items():
            refuse_callables_in(value, f"{where}.{key}")
    elif isinstance(data, list | tuple):
        for index, value in enumerate(data):
            refuse_callables_in(value, f"{where}[{index}]")


def _refusal(where: str, value: object) -> ConfigError:
    form = "a CEL condition" if where.endswith(".when") else "a template"
    return ConfigError(
        f"{where} is a Python callable ({python_name(value)}): it can live only in code "
        "(register_tool, a RuleSet given to the gate); rules that are stored, written to a file "
        f"or sent to a server say it as {form}"
    )
