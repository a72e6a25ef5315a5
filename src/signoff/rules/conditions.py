"""`when` conditions: CEL expressions over `args`, `tool`, `agent`, `app`, `requester` and
`tool_annotations` (what the tool says of itself, e.g. MCP's `destructiveHint`; `{}` when unknown).

Each expression is compiled once and kept. A condition that cannot be evaluated for a call
(a missing argument, a non-boolean result) counts as true: when in doubt, ask.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError

if TYPE_CHECKING:
    import cel

VARIABLES = ("args", "tool", "agent", "app", "requester", "tool_annotations")


@dataclass(frozen=True)
class ConditionResult:
    value: bool
    error: str | None = None


@lru_cache(maxsize=1024)
def compile_condition(expression: str) -> cel.Program:
    import cel  # its package imports a terminal UI (prompt_toolkit): only where a rule has a `when`

    try:
        return cel.compile(expression)
    except (ValueError, RuntimeError) as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"invalid `when` condition {expression!r}: {first_line}") from None


def evaluate_condition(expression: str, context: dict[str, Any]) -> ConditionResult:
    program = compile_condition(expression)
    try:
        value = program.execute(context)
    except (KeyError, ValueError, RuntimeError, TypeError) as exc:
        return ConditionResult(True, f"could not evaluate ({type(exc).__name__}: {exc}); asking")
    if not isinstance(value, bool):
        return ConditionResult(True, f"returned {value!r}, not a boolean; asking")
    return ConditionResult(value)
