"""The signoff scope of an Agents SDK run: the thread and who the run is for.

    await approval.run(agent, "mail alice", thread_id="t-42", context={"signoff": {"requester": "al"}})

The run context (`Runner.run(..., context=...)`) may carry, under `"signoff"` (a dict key, or an
attribute of a context object), a `signoff.Scope` or a dict with any of its fields; they overlay
the adapter's defaults. `SignoffApproval.run` and `.resume` also bind the thread they were given
for the whole run (a context variable), so the tools find their requests by (thread_id, call_id).
A Scope in the run context is saved with the `RunState`, so a resumed run keeps it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

from signoff import Scope

from .._scope import SCOPE_KEY, ScopeDefaults, overlaid, overlay_scope, rule_fields

_bound_defaults: ContextVar[ScopeDefaults | None] = ContextVar("signoff_openai_agents_scope", default=None)
_bound_run: ContextVar[BoundRun | None] = ContextVar("signoff_openai_agents_run", default=None)


@dataclass(frozen=True)
class BoundRun:
    """The run context of a `SignoffApproval` run, and the rules' fields read from it at the start."""

    context: Any
    given: Any
    """A copy of the context's `"signoff"` value as it was read."""
    agent: str | None
    app: str | None


@contextmanager
def bound_thread(defaults: ScopeDefaults, thread_id: str, context: Any = None) -> Iterator[None]:
    """Within, the scope's defaults are `defaults` with `thread_id`, and `context` is the run's
    context (asyncio tasks inherit both): what `bound_rule_fields` reads."""
    bound = replace(defaults, thread_id=thread_id)
    given = given_scope(context)
    agent, app, _ = rule_fields(given, bound, where=_WHERE)  # checked here, once
    token = _bound_defaults.set(bound)
    run_token = _bound_run.set(BoundRun(context, _copy(given), agent, app))
    try:
        yield
    finally:
        _bound_run.reset(run_token)
        _bound_defaults.reset(token)


def bound_rule_fields() -> tuple[str | None, str | None] | None:
    """(agent, app) the rules read for a call of the bound run, as `fields_of` finds them; None
    outside such a run, or when its context's `"signoff"` changed since (then read it per call)."""
    run = _bound_run.get()
    if run is None or given_scope(run.context) != run.given:
        return None
    return run.agent, run.app


def _copy(given: Any) -> Any:
    return dict(given) if isinstance(given, Mapping) else given  # a Scope is frozen


def given_scope(context: Any) -> Any:
    """The run context's `"signoff"` value (a key of a mapping, or an attribute), if any."""
    if context is None:
        return None
    if type(context) is dict or isinstance(context, Mapping):  # `type` first: the ABC check is slow
        return context.get(SCOPE_KEY)
    return getattr(context, SCOPE_KEY, None)


def fields_of(context: Any, defaults: ScopeDefaults) -> dict[str, Any]:
    """The scope's fields as `scope_of` overlays them (the thread may be None: none is made up)."""
    return overlaid(given_scope(context), _bound_defaults.get() or defaults, where=_WHERE)


_WHERE = f"the run context's {SCOPE_KEY!r}"


def scope_of(context: Any, defaults: ScopeDefaults, *, thread_required: bool = False) -> Scope:
    """The scope of one call: the bound (or the adapter's) defaults overlaid with the run context's."""
    base = _bound_defaults.get() or defaults
    return overlay_scope(
        given_scope(context),
        base,
        where=_WHERE,
        thread_prefix="openai-agents-",
        thread_required=(
            "a paused Agents SDK run needs a thread: pass thread_id= to SignoffApproval.run (or "
            f"context={{{SCOPE_KEY!r}: {{'thread_id': ...}}}} to Runner.run), the same one when resuming"
        )
        if thread_required
        else None,
    )
