"""Function tools whose approval is signoff's: `needs_approval` from the rules, and an invoker that
runs an approved call exactly once, with the args a person edited.

`gate_tool(tool, ...)` changes a `FunctionTool` in place (and returns it):

- `needs_approval` becomes a predicate asking the gate whether this call needs a person
  (`gate.explain` for the tool, the call's args and the run's scope: rules from the store or a
  file, CEL `when`, agent and app layers). A tool that had `needs_approval=True` keeps asking:
  that becomes its tool-layer rule (`Gate.register_tool`), which the store's layers still
  override, as the LangChain adapter treats `interrupt_on`. The tool reads
  `needs_approval=False` while its rules ask about none of its calls, whatever the args (its
  class gets a `needs_approval` descriptor; copies keep it), so the SDK spends on it what it
  spends on a plain `False` (for anyone's calls it is one: a stand-in in the tool's `__dict__`
  while `Gate.asks_nowhere`'s answer is kept, removed with it), and inside
  `SignoffApproval.run` and `.resume` for the run's agent and app; otherwise (a tool that asks
  somebody, under `Runner.run` directly) the SDK gets the predicate.
- `on_invoke_tool` is wrapped. A call the SDK runs after an approval is the call of a signoff
  request (found by the run's thread_id and the model's call_id): it runs through `gate.arun`,
  so it runs at most once per request, replays its stored result when run again, and runs with
  the request's final args: an edit is applied here (the SDK itself cannot run edited args).
  After an edit the model gets the rule's modify note before the result, as signoff's `Reply`
  writes it, since the call it sees in its history is the one it produced. A call nobody was
  asked about runs as before, without touching the store.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from agents import FunctionTool, RunContextWrapper, function_tool
from agents.tool_context import ToolContext

from signoff import Gate, ToolCall, ToolEntry

from .._scope import ScopeDefaults
from .context import bound_rule_fields, fields_of, scope_of

Invoker = Callable[[ToolContext[Any], str], Awaitable[Any]]


class GatedInvoker:
    """A `FunctionTool.on_invoke_tool` that runs approved calls through `gate.arun` (see the module)."""

    def __init__(self, inner: Invoker, tool: FunctionTool, gate: Gate, defaults: ScopeDefaults) -> None:
        self.inner = inner
        self.tool_name = tool.name
        self.description = tool.description
        self.schema = tool.params_json_schema
        self.gate = gate
        self.defaults = defaults

    def call(self, args: dict[str, Any], call_id: str) -> ToolCall:
        return ToolCall(
            name=self.tool_name, args=args, id=call_id, description=self.description, schema=self.schema
        )

    async def __call__(self, ctx: ToolContext[Any], input: str) -> Any:
        if ctx.is_tool_approved(ctx.tool_name, ctx.tool_call_id) is not True:
            return await self.inner(ctx, input)  # nobody was asked: the SDK's own path
        scope = scope_of(ctx.context, self.defaults)
        args = json.loads(input) if input else {}

        async def once(**final: Any) -> Any:
            # The SDK hands prepared arguments only to its own invoker (it checks
            # `approval.invoker is tool.on_invoke_tool`), never to this one: the edited args
            # reach the tool as the JSON input the SDK would parse (agents/tool.py 0.24).
            return await self.inner(ctx, input if final == args else json.dumps(final))

        # approved by the SDK, so asked about: its request's decision stands (resumed)
        call = self.call(args, ctx.tool_call_id)
        reply = await self.gate.arun(call, once, scope, suspend=True, resumed=True)
        if not (reply.executed or reply.replayed) or reply.outcome.decision == "edit":
            return reply.content
        return reply.value


class RulesApproval:
    """A gated tool's `needs_approval`: asks the gate's rules whether this call needs a person
    (`gate.explain` for the tool, the call's args and the run's scope)."""

    __signoff__ = True

    def __init__(self, gate: Gate, tool_name: str, defaults: ScopeDefaults) -> None:
        self.gate = gate
        self.tool_name = tool_name
        self.defaults = defaults
        self.nowhere = gate.nowhere

    async def __call__(self, ctx: RunContextWrapper[Any], params: dict[str, Any], call_id: str) -> bool:
        if self.nowhere[self.tool_name]:
            return False
        # the rules need who and where, not the thread: no Scope is made (nor a thread made up)
        who = fields_of(ctx.context, self.defaults)
        return self.gate.explain(
            self.tool_name, agent=who["agent"], app=who["app"], args=params, requester=who["requester"]
        ).ask

    def setting(self) -> bool | RulesApproval:
        """What the SDK reads as the tool's `needs_approval` now: False when the rules ask about
        no call of this tool for anyone, or, inside a run of `SignoffApproval`, for the run's
        agent and app, whatever the args (the SDK then neither parses the args nor awaits a
        predicate, as for `needs_approval=False`); else this predicate, asked per call."""
        if self.nowhere[self.tool_name]:
            return False
        where = bound_rule_fields()
        if where is None or self.gate.may_ask(self.tool_name, where[0], where[1]):
            return self
        return False

    def setting_of(self, tool: Any) -> bool | RulesApproval:
        """`setting()` for `tool`; while the rules in force ask about no call of it, a plain
        `False` stands in `tool.__dict__` (what the SDK reads first), gone with that answer."""
        if not self.nowhere[self.tool_name]:
            return self.setting()
        held = weakref.ref(tool)

        def apply() -> None:
            tool.__dict__.update({"needs_approval": False, HELD: True})

        def undo() -> None:
            if (still := held()) is not None and still.__dict__.pop(HELD, False):
                still.__dict__.pop("needs_approval", None)

        self.nowhere.mirror(self.tool_name, True, apply, undo)
        return False


def signoff_needs_approval(gate: Gate, tool_name: str, defaults: ScopeDefaults) -> RulesApproval:
    """A `needs_approval` predicate for `tool_name` that asks the gate's rules."""
    return RulesApproval(gate, tool_name, defaults)


APPROVAL = "_signoff_rules_approval"
"""Where a gated tool keeps its `RulesApproval` (in its `__dict__`)."""
HELD = "_signoff_needs_approval_held"
"""Set while the tool's `needs_approval` in its `__dict__` is signoff's stand-in `False`."""


class RulesSetting:
    """`needs_approval` on a gated tool's class. Not a data descriptor: while the tool's
    `__dict__` holds a value (signoff's stand-in `False`, or one set later), the SDK's two reads
    per call are plain attribute reads; else the tool's `RulesApproval` says (`setting_of`)."""

    def __get__(self, tool: Any, owner: type | None = None) -> Any:
        if tool is None:
            return self
        approval = tool.__dict__.get(APPROVAL)
        return False if approval is None else approval.setting_of(tool)


def _setting_kept(tool: Any, name: str, value: Any) -> bool:
    """Setting `name` on a gated tool: a `RulesApproval` set as `needs_approval` is kept aside
    for `RulesSetting` (True: done); any other value is set as usual (False), and one set as
    `needs_approval` is kept as is (no stand-in: no rule change removes it)."""
    if name != "needs_approval":
        return False
    tool.__dict__.pop(HELD, None)
    if not isinstance(value, RulesApproval):
        return False
    tool.__dict__[APPROVAL] = value
    tool.__dict__.pop("needs_approval", None)
    return True


def _without_stand_in(state: dict[str, Any]) -> dict[str, Any]:
    """A copy's state: signoff's stand-in belongs to the original (only its answer removes it)."""
    if state.pop(HELD, False):
        state.pop("needs_approval", None)
    return state


_gated_classes: dict[type, type] = {}


def _gated_class(cls: type[FunctionTool]) -> type[FunctionTool]:
    """`cls` with `needs_approval` read through the rules (one subclass per tool class; the SDK
    copies tools with `type(self)`, so copies stay gated)."""
    if (gated := _gated_classes.get(cls)) is not None:
        return gated

    def copied(tool: Any) -> Any:
        duplicate = cls.__copy__(tool)
        _without_stand_in(duplicate.__dict__)
        return duplicate

    def state(tool: Any) -> Any:
        return _without_stand_in(dict(tool.__dict__))

    def set_attribute(tool: Any, name: str, value: Any) -> None:
        if not _setting_kept(tool, name, value):
            cls.__setattr__(tool, name, value)

    namespace: dict[str, Any] = {
        "needs_approval": RulesSetting(),
        "__setattr__": set_attribute,
        "__getstate__": state,
        "__module__": cls.__module__,
    }
    if hasattr(cls, "__copy__"):
        namespace["__copy__"] = copied
    gated = _gated_classes[cls] = type(cls.__name__, (cls,), namespace)
    return gated


def is_gated(tool: Any) -> bool:
    """Whether `tool` is a function tool `gate_tool` wrapped (so edits and exactly-once apply)."""
    return isinstance(tool, FunctionTool) and isinstance(tool.on_invoke_tool, GatedInvoker)


def gate_tool(tool: FunctionTool, gate: Gate, defaults: ScopeDefaults) -> FunctionTool:
    """Make `tool`'s approval signoff's, in place (see the module); gating it twice changes nothing."""
    if not isinstance(tool, FunctionTool):
        raise TypeError(
            f"signoff gates function tools (agents.FunctionTool); got {type(tool).__name__}. Hosted, "
            "shell and MCP tools keep their own needs_approval: their interruptions still become "
            "signoff requests, without edit"
        )
    if is_gated(tool):
        return tool
    if callable(tool.needs_approval):
        raise ValueError(
            f"tool {tool.name!r} has its own needs_approval function; with signoff the rules say "
            "which calls ask (a CEL `when` on the tool's rule): drop it, or leave the tool ungated"
        )
    if tool.needs_approval is True:
        gate.register_tool(tool.name, ToolEntry(requires_approval=True))
    tool.__class__ = _gated_class(type(tool))
    tool.needs_approval = signoff_needs_approval(gate, tool.name, defaults)
    tool.on_invoke_tool = GatedInvoker(tool.on_invoke_tool, tool, gate, defaults)
    return tool


def gated_function_tool(gate: Gate, defaults: ScopeDefaults, func: Any = None, **options: Any) -> Any:
    """`agents.function_tool` (with its options), then `gate_tool`: `@approval.function_tool`."""
    if func is not None:
        return gate_tool(function_tool(func, **options), gate, defaults)

    def decorate(inner: Any) -> FunctionTool:
        return gate_tool(function_tool(inner, **options), gate, defaults)

    return decorate
