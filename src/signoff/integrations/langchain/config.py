"""`interrupt_on` as `HumanInTheLoopMiddleware` takes it, and the signoff scope of a run.

Each entry becomes a code-declared tool default (the tool layer, `Gate.register_tool`), so the
store's agent and app layers still apply on top. What a rule cannot hold, a Python `when` and a
Python `description`, stays here and is applied per call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig

from signoff import Scope, ToolEntry

ALL_DECISIONS = ("approve", "edit", "reject", "respond")
STOCK_DESCRIPTION = "{prefix}\n\nTool: {tool_name}\nArgs: {tool_args}"


@dataclass(frozen=True, kw_only=True)
class CodeTool:
    """One `interrupt_on` entry that asks: its tool-layer rule and its Python parts."""

    name: str
    entry: ToolEntry
    allowed_decisions: tuple[str, ...]
    describe: Callable[..., str] | None = None
    """A callable `description(tool_call, state, runtime)`: the text of the interrupt payload."""
    when: Callable[[Any], bool] | None = None
    """A callable `when(ToolCallRequest)`: False lets the call through unasked (unless the app's
    `hitl_required` lists the tool: nothing silences that)."""


def parse_interrupt_on(
    interrupt_on: Mapping[str, bool | Mapping[str, Any]], description_prefix: str
) -> tuple[dict[str, CodeTool], dict[str, ToolEntry]]:
    """The asking entries, and every entry's tool-layer rule (`False` declares "don't ask")."""
    asking: dict[str, CodeTool] = {}
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
        description = config.get("description")
        when = config.get("when")
        entry = ToolEntry(
            requires_approval=True,
            allowed_decisions=list(allowed),
            description=description if isinstance(description, str) else template,
        )
        entries[name] = entry
        asking[name] = CodeTool(
            name=name,
            entry=entry,
            allowed_decisions=tuple(entry.allowed_decisions or ALL_DECISIONS),
            describe=description if callable(description) else None,
            when=when if callable(when) else None,
        )
    return asking, entries


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
