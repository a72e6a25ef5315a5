"""`interrupt_on` as `HumanInTheLoopMiddleware` takes it, and the signoff scope of a run.

Each entry becomes a code-declared tool default of the middleware's own (its tool layer, as a
component of the gate: `Gate.component`), so the rules in force still apply on top; its
`allowed_decisions` stay as given, as the stock middleware keeps them. A `when` is a CEL
expression (as in rules) or a Python callable, and a callable `description` becomes the entry's
own (see `.callables`): the gate applies them per call, and the description it writes is the
signoff card.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pydantic
from langchain_core.runnables import RunnableConfig

from signoff import Scope, ToolEntry

from .callables import signoff_description, signoff_when

ALL_DECISIONS = ("approve", "edit", "reject", "respond")
STOCK_DESCRIPTION = "{prefix}\n\nTool: {tool_name}\nArgs: {tool_args}"


def parse_interrupt_on(
    interrupt_on: Mapping[str, bool | Mapping[str, Any]], description_prefix: str
) -> dict[str, ToolEntry]:
    """Every entry's tool-layer rule (`False` declares "don't ask")."""
    entries: dict[str, ToolEntry] = {}
    # The prefix becomes part of a template: a placeholder in it ({tool_name}...) is filled.
    template = STOCK_DESCRIPTION.replace("{prefix}", description_prefix)
    for name, config in interrupt_on.items():
        if isinstance(config, bool):
            if not config:
                entries[name] = ToolEntry(requires_approval=False)
                continue
            config = {"allowed_decisions": list(ALL_DECISIONS)}
        allowed = config.get("allowed_decisions")
        if not allowed:
            raise ValueError(
                f"Invalid `interrupt_on` config for tool '{name}': `allowed_decisions` must be a "
                "non-empty list of decision types (e.g. ['approve', 'reject']). Got config with keys "
                f"{sorted(config.keys())} and allowed_decisions={allowed!r}."
            )
        settings: dict[str, Any] = {"allowed_decisions": list(allowed), "description": template}
        description, when = config.get("description"), config.get("when")
        if isinstance(description, str):
            settings["description"] = description
        elif callable(description):
            settings["description"] = signoff_description(description)
        if callable(when):
            settings["when"] = signoff_when(when)
        elif when is not None:
            settings["when"] = when  # a CEL expression: checked as the rules check theirs
        try:
            entries[name] = ToolEntry(requires_approval=True, **settings)
        except pydantic.ValidationError as exc:
            problems = "; ".join(error["msg"] for error in exc.errors())
            raise ValueError(f"Invalid `interrupt_on` config for tool '{name}': {problems}") from None
    return entries


def thread_of(config: RunnableConfig | None) -> str:
    configurable = (config or {}).get("configurable") or {}
    thread_id = configurable.get("thread_id")
    if thread_id is None or thread_id == "":
        raise ValueError(
            "SignoffMiddleware needs the run's thread_id: invoke the agent with "
            "config={'configurable': {'thread_id': ...}} (and a checkpointer), as the stock "
            "HumanInTheLoopMiddleware needs; signoff keys each request by (thread_id, tool_call_id)"
        )
    return str(thread_id)


@dataclass(frozen=True, kw_only=True)
class ScopeFields:
    """What the middleware adds to every call's scope besides the thread."""

    agent: str | None = None
    app: str | None = None
    requester: str | None = None
    unattended: bool = False

    def scope(self, config: RunnableConfig | None) -> Scope:
        return self.scope_in(thread_of(config))

    def scope_in(self, thread_id: str) -> Scope:
        return Scope(
            thread_id=thread_id,
            agent=self.agent,
            app=self.app,
            requester=self.requester,
            unattended=self.unattended,
        )
