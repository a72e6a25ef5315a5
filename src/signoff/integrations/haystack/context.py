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

import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from signoff import Scope

SCOPE_KEY = "signoff"
SCOPE_FIELDS = tuple(field.name for field in fields(Scope))


@dataclass(frozen=True, kw_only=True)
class ScopeDefaults:
    """The adapter's own scope fields; `hook_context["signoff"]` overrides them per run."""

    thread_id: str | None = None
    agent: str | None = None
    app: str | None = None
    requester: str | None = None
    unattended: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def scope_from_context(
    context: Mapping[str, Any] | None, defaults: ScopeDefaults, *, thread_required: bool = False
) -> Scope:
    """The scope of one call: the adapter's defaults overlaid with `hook_context["signoff"]`."""
    given = (context or {}).get(SCOPE_KEY)
    if given is None:
        overlay: dict[str, Any] = {}
    elif isinstance(given, Scope):
        overlay = {name: getattr(given, name) for name in SCOPE_FIELDS}
    elif isinstance(given, Mapping):
        unknown = sorted(set(given) - set(SCOPE_FIELDS))
        if unknown:
            raise ValueError(
                f"hook_context[{SCOPE_KEY!r}] has unknown keys {unknown}; use {', '.join(SCOPE_FIELDS)}"
            )
        overlay = {key: value for key, value in given.items() if value is not None}
    else:
        raise TypeError(
            f"hook_context[{SCOPE_KEY!r}] must be a signoff.Scope or a dict, got {type(given).__name__}"
        )
    merged = {**defaults.to_dict(), **overlay}
    if not merged.get("thread_id"):
        if thread_required:
            raise ValueError(
                f"a durable pause needs a thread: pass hook_context={{{SCOPE_KEY!r}: {{'thread_id': ...}}}} "
                "(the same one when resuming)"
            )
        merged["thread_id"] = f"haystack-{uuid.uuid4().hex}"
    return Scope(**merged)
