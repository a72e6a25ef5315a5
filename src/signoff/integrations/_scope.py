"""The signoff scope an adapter reads from its framework's run context.

Each framework carries a per-run value to the places a call is decided (Haystack's `hook_context`,
the Agents SDK's run context). Under the key `SCOPE_KEY` ("signoff") it holds a `signoff.Scope` or
a dict with any of its fields, overlaid on the adapter's own defaults (`ScopeDefaults`).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from signoff import Scope

SCOPE_KEY = "signoff"
SCOPE_FIELDS = tuple(field.name for field in fields(Scope))
_SCOPE_FIELD_SET = frozenset(SCOPE_FIELDS)


@dataclass(frozen=True, kw_only=True)
class ScopeDefaults:
    """The adapter's own scope fields; the run's `SCOPE_KEY` value overrides them per run."""

    thread_id: str | None = None
    agent: str | None = None
    app: str | None = None
    requester: str | None = None
    unattended: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)  # the fields (str, bool): `asdict`'s deep copy is not needed


def overlaid(given: Any, defaults: ScopeDefaults, *, where: str) -> dict[str, Any]:
    """The scope's fields: `defaults` overlaid with `given` (a Scope, a dict of its fields, or
    None); `where` names the value in errors (e.g. "hook_context['signoff']")."""
    merged = defaults.to_dict()
    if given is None:
        return merged
    if type(given) is dict or isinstance(given, Mapping):  # `type` first: the ABC check is slow
        if not given.keys() <= _SCOPE_FIELD_SET:
            unknown = sorted(set(given) - _SCOPE_FIELD_SET)
            raise ValueError(f"{where} has unknown keys {unknown}; use {', '.join(SCOPE_FIELDS)}")
        for key, value in given.items():
            if value is not None:
                merged[key] = value
    elif isinstance(given, Scope):
        for name in SCOPE_FIELDS:
            merged[name] = getattr(given, name)
    else:
        raise TypeError(f"{where} must be a signoff.Scope or a dict, got {type(given).__name__}")
    return merged


def rule_fields(
    given: Any, defaults: ScopeDefaults, *, where: str
) -> tuple[str | None, str | None, str | None]:
    """(agent, app, requester) as `overlaid` makes them (the fields the rules read), checked the
    same way, without building the whole scope: an adapter's per-call path."""
    if given is None:
        return defaults.agent, defaults.app, defaults.requester
    if type(given) is dict and given.keys() <= _SCOPE_FIELD_SET:
        agent, app, requester = given.get("agent"), given.get("app"), given.get("requester")
        return (
            defaults.agent if agent is None else agent,
            defaults.app if app is None else app,
            defaults.requester if requester is None else requester,
        )
    merged = overlaid(given, defaults, where=where)  # other mappings, a Scope; or the error
    return merged["agent"], merged["app"], merged["requester"]


def overlay_scope(
    given: Any,
    defaults: ScopeDefaults,
    *,
    where: str,
    thread_prefix: str,
    thread_required: str | None = None,
) -> Scope:
    """`defaults` overlaid with `given` (see `overlaid`), as a Scope. Without a thread_id,
    `thread_required` is the error raised (a durable pause needs one); if None, the call gets a
    thread of its own (`thread_prefix` + a random hex), so nothing is replayable and nothing is
    mixed up."""
    merged = overlaid(given, defaults, where=where)
    if not merged.get("thread_id"):
        if thread_required is not None:
            raise ValueError(thread_required)
        merged["thread_id"] = f"{thread_prefix}{uuid.uuid4().hex}"
    return Scope(**merged)
