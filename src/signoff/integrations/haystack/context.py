"""The signoff scope of a Haystack run, read from the Agent's `hook_context`.

    agent.run(messages, hook_context={"signoff": {"thread_id": "ticket-42", "requester": "alice"}})

`hook_context["signoff"]` (`SCOPE_KEY`) is a `signoff.Scope` or a dict with any of its fields:

- `thread_id`: the conversation; with the model's tool_call_id it keys each request, so a replay
  of the same turn finds the same requests. Without one, every call gets a thread of its own
  (nothing is replayable, nothing is mixed up between runs). The durable pause requires one.
- `requester`: the end user the agent acts for (approver rules, `AskOnce` memory).
- `app`, `agent`: the rule layers that apply (the adapter's own values are the defaults).
- `unattended`: a run with nobody to ask (cron): the rule's `unattended` mode decides.

Other keys of `hook_context` are left to other hooks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from signoff import Scope

from .._scope import SCOPE_FIELDS, SCOPE_KEY, ScopeDefaults, overlaid, overlay_scope, rule_fields

__all__ = [
    "SCOPE_FIELDS",
    "SCOPE_KEY",
    "ScopeDefaults",
    "fields_from_context",
    "rule_fields_from_context",
    "scope_from_context",
]
_WHERE = f"hook_context[{SCOPE_KEY!r}]"


def fields_from_context(context: Mapping[str, Any] | None, defaults: ScopeDefaults) -> dict[str, Any]:
    """The scope's fields as `scope_from_context` overlays them (the thread may be None)."""
    return overlaid((context or {}).get(SCOPE_KEY), defaults, where=_WHERE)


def rule_fields_from_context(
    context: Mapping[str, Any] | None, defaults: ScopeDefaults
) -> tuple[str | None, str | None, str | None]:
    """(agent, app, requester) of the scope `scope_from_context` makes: what the rules read."""
    return rule_fields(context.get(SCOPE_KEY) if context else None, defaults, where=_WHERE)


def scope_from_context(
    context: Mapping[str, Any] | None, defaults: ScopeDefaults, *, thread_required: bool = False
) -> Scope:
    """The scope of one call: the adapter's defaults overlaid with `hook_context["signoff"]`."""
    return overlay_scope(
        (context or {}).get(SCOPE_KEY),
        defaults,
        where=_WHERE,
        thread_prefix="haystack-",
        thread_required=(
            f"a durable pause needs a thread: pass hook_context={{{SCOPE_KEY!r}: {{'thread_id': ...}}}} "
            "(the same one when resuming)"
        )
        if thread_required
        else None,
    )
