"""What one component declares in code: its tools' and services' own defaults (DESIGN §4).

A component is whatever names tools as gated in code: a framework adapter (`interrupt_on`, a
Haystack strategy's key, `gate_tools`), a `@guard`ed function, an MCP proxy's service. Its
declarations are the tool layer *for that component*: two components on one gate never see each
other's (`Gate.component`).

The rules in force lie over a declaration field by field: the rules' own entry for exactly that
tool (its name, or a list key holding it) or that service wins for each setting it writes. A
named tool asks unless a rule in force explicitly turns it off: `requires_approval: false` on
the tool's own entry, or an agent's or app's `false`, or `hitl_disabled` (the resolver's later
layers). A glob or `*` in the rules does not name the tool, so it neither switches it off nor
is overridden by it: "no rule found" never means "run unasked" for a named tool.

The component's `allowed_decisions` stay as it gave them (a framework drop-in keeps its author's
list, as the framework does); where a rule layer writes the list, approve is added (seed 004).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from .keys import Key, KeyIndex
from .model import RuleSet, ServiceEntry, ToolEntry

E = TypeVar("E", ToolEntry, ServiceEntry)
DeclaredTools = Mapping[str, ToolEntry] | Mapping[Key, ToolEntry]
"""Tools by name (or a tuple of names, Haystack's key), each with its own default."""


@dataclass(frozen=True)
class Applied:
    """A rule set with a component's declarations laid beneath its own entries."""

    rules: RuleSet
    code_keys: frozenset[str]
    """Declared tools and services the rules do not name themselves (their rule is the code's)."""
    as_given: frozenset[str]
    """Declared tools whose allowed decisions are the component's own (approve is not added)."""


@dataclass
class Declarations:
    """One component's declared tools (exact names) and services; `beneath`: the declarations of
    the gate it is a component of (the gate's own), which its own override name by name."""

    tools: dict[str, ToolEntry] = field(default_factory=dict)
    services: dict[str, ServiceEntry] = field(default_factory=dict)
    beneath: Declarations | None = None

    @classmethod
    def of(
        cls,
        tools: DeclaredTools | None = None,
        services: Mapping[str, ServiceEntry] | None = None,
    ) -> Declarations:
        declared = cls()
        for key, entry in (tools or {}).items():
            for name in _names(key):
                declared.tools[name] = entry
        declared.services.update(services or {})
        return declared

    def __bool__(self) -> bool:
        return bool(self.tools or self.services or self.beneath)

    def all_tools(self) -> dict[str, ToolEntry]:
        return {**(self.beneath.all_tools() if self.beneath else {}), **self.tools}

    def all_services(self) -> dict[str, ServiceEntry]:
        return {**(self.beneath.all_services() if self.beneath else {}), **self.services}

    def apply(self, rules: RuleSet) -> Applied:
        if not self:
            return Applied(rules, frozenset(), frozenset())
        index = KeyIndex(rules.tools)
        tools = dict(rules.tools)
        code_keys: set[str] = set()
        as_given: set[str] = set()
        for name, declared in self.all_tools().items():
            match = index.match(name)
            own = match.value if match is not None and match.kind in ("exact", "list") else None
            if own is None:
                code_keys.add(name)
                tools[name] = declared
            else:
                tools[name] = _overlay(ToolEntry, declared, own)
            if "allowed_decisions" in declared.fields_set() and (
                own is None or "allowed_decisions" not in own.fields_set()
            ):
                as_given.add(name)
        services = dict(rules.services)
        for name, declared_service in self.all_services().items():
            own_service = rules.services.get(name)
            if own_service is None:
                code_keys.add(name)
                services[name] = declared_service
            else:
                services[name] = _overlay(ServiceEntry, declared_service, own_service)
        merged = rules.model_copy(update={"tools": tools, "services": services})
        return Applied(merged, frozenset(code_keys), frozenset(as_given))


def _names(key: Key) -> Iterable[str]:
    return key if isinstance(key, tuple) else (key,)


def _overlay(model: type[E], declared: E, own: E) -> E:
    """`own`'s settings over `declared`'s, each one it writes (kept as set, for later overlays)."""
    settings = {**declared.fields_set(), **own.fields_set()}
    # model_construct: the settings were each validated already (and may hold Python callables)
    return model.model_construct(_fields_set=set(settings), **settings)
