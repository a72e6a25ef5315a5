"""`@gate.guard`: a function whose calls are reviewed and run at most once.

The check for a call that needs no approval is kept to a few dictionary look-ups (the rules'
answer for (tool, agent, app) is cached), so guarding a safe tool costs about a microsecond.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pydantic

from .calls import ToolCall
from .errors import ConfigError
from .outcome import Outcome, Reply
from .rules.model import ToolEntry
from .scopes import current_scope

if TYPE_CHECKING:
    from .gate import Gate


def schema_of(func: Callable[..., Any]) -> dict[str, Any] | None:
    """The JSON Schema of a function's arguments, from its annotations (pydantic)."""
    try:
        adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(func)  # type: ignore[arg-type]
        return adapter.json_schema()
    except (pydantic.PydanticSchemaGenerationError, pydantic.PydanticUserError, TypeError):
        return None


def make_guard(
    gate: Gate,
    func: Callable[..., Any],
    *,
    name: str | None,
    description: str | None,
    schema: dict[str, Any] | None,
    requires_approval: bool,
    allowed_decisions: list[str] | None,
    approval_description: str | None,
    idempotent: bool,
    suspend: bool,
    timeout: float | None,
) -> Callable[..., Any]:
    tool_name = name or func.__name__
    tool_description = description if description is not None else inspect.getdoc(func)
    tool_schema = schema if schema is not None else schema_of(func)
    entry: dict[str, Any] = {"requires_approval": requires_approval}
    if allowed_decisions is not None:
        if not allowed_decisions:
            raise ValueError(f"guard {tool_name!r}: allowed_decisions must name at least one decision")
        entry["allowed_decisions"] = allowed_decisions
    if approval_description is not None:
        entry["description"] = approval_description
    declared = ToolEntry.model_validate(entry)
    earlier = gate.declaration(tool_name)
    if earlier is not None and earlier != declared:
        # one gate is one component: which of two declarations holds would be a guess
        raise ConfigError(
            f"tool {tool_name!r} is declared twice on this gate with different rules; give each "
            "its own gate (gate.component()) or declare it once"
        )
    gate.register_tool(tool_name, declared)
    signature = inspect.signature(func)
    free = Outcome(tool_name=tool_name, execute=True)

    def to_call(args: tuple[Any, ...], kwargs: dict[str, Any]) -> ToolCall:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return ToolCall(
            name=tool_name, args=dict(bound.arguments), description=tool_description, schema=tool_schema
        )

    def needs_review() -> bool:
        if gate.asks_nowhere(tool_name):  # kept: one lookup while the rules ask about no call of it
            return False
        state = current_scope.get()
        scope = state.scope if state is not None else gate.default_scope
        return gate.resolver().static(tool_name, scope.agent, scope.app).ask

    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def guarded_async(*args: Any, **kwargs: Any) -> Reply:
            if not needs_review():
                return Reply(outcome=free, value=await func(*args, **kwargs), executed=True)
            return await gate.arun(
                to_call(args, kwargs), func, idempotent=idempotent, timeout=timeout, suspend=suspend
            )

        return guarded_async

    @functools.wraps(func)
    def guarded(*args: Any, **kwargs: Any) -> Reply:
        if not needs_review():
            return Reply(outcome=free, value=func(*args, **kwargs), executed=True)
        return gate.run(to_call(args, kwargs), func, idempotent=idempotent, timeout=timeout, suspend=suspend)

    return guarded
