"""A gate's setup and what its rules would ask (DESIGN §4–§6): the store, the rules in force with
this component's declarations beneath them, the policy, ui, default scope and actor. Nothing here
asks a person or waits; `signoff.gate.Gate` adds that on top.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from ._util import os_user
from .backend import Backend
from .calls import Scope
from .execution import DEFAULT_LEASE
from .fresh_answers import Answers
from .gate_plan import Planner
from .gate_rules import GateRules
from .policies import AlwaysAsk, Policy
from .rules.declared import Declarations, DeclaredTools
from .rules.explanation import Explanation
from .rules.model import RuleSet, ServiceEntry, ToolEntry
from .rules.resolve import Resolver
from .scopes import ScopeState, current_scope
from .store import open_store

if TYPE_CHECKING:
    from .console import ConfirmationUI

__all__ = ["GateSetup"]


class GateSetup:
    """A gate's store, rules, policy, ui, scope and actor, and what the rules would ask.

    `rules`: a `RuleSet`, a YAML file path, or None to follow the rules kept in the store
    (re-read within `rules_refresh` seconds of a change, so switching HITL off takes effect
    at once). `policy` narrows further (`AskOnce`...). `ui` presents requests in this process
    (a console); without one, decisions come from elsewhere (CLI, server, chat).

    Waiters are woken by push and otherwise sleep until their deadline; `poll_interval` makes
    each also look again that often (costly with many waiters: the store's own source of
    wake-ups has a per-process safety net already).
    """

    def __init__(
        self,
        store: Backend | None = None,
        *,
        rules: RuleSet | str | Path | None = None,
        policy: Policy | None = None,
        ui: ConfirmationUI | None = None,
        scope: Scope | None = None,
        actor: str | None = None,
        lease: timedelta = DEFAULT_LEASE,
        max_auto_resume: int | None = None,
        poll_interval: float | None = None,
        rules_refresh: float = 1.0,
    ) -> None:
        self.store: Backend = store if store is not None else open_store()
        self.ui = ui
        self.default_scope = scope or Scope()
        self.actor = actor or os_user()
        self.lease = lease
        self.poll_interval = poll_interval
        self._follow(
            GateRules(self.store, rules, refresh=rules_refresh),
            policy if policy is not None else AlwaysAsk(),
            max_auto_resume,
        )

    def _follow(self, gate_rules: GateRules, policy: Policy, max_auto_resume: int | None) -> None:
        self._gate_rules = gate_rules
        self._max_auto_resume = max_auto_resume
        self.nowhere: Answers = gate_rules.answers
        """`nowhere[tool]`: True when the rules in force ask about no call of `tool` (for any
        agent, app, args or requester): an adapter's first check, before it reads the run's
        context; else check the call (`may_ask`, `explain`). One dict lookup while the rules
        hold (a change in the store is seen within `rules_refresh`; `signoff.fresh_answers`);
        subscripted, not called: the hottest paths pay no call at all."""
        self.asks_nowhere: Callable[[str], bool] = gate_rules.answers.__getitem__
        """`nowhere[tool]` as a function."""
        self._planner = Planner(self.store, gate_rules, policy, max_auto_resume=max_auto_resume)

    def component(
        self,
        *,
        tools: DeclaredTools | None = None,
        services: Mapping[str, ServiceEntry] | None = None,
    ) -> Self:
        """A gate for one component (a framework adapter, a guarded function, an MCP proxy): the
        same store, rules in force, policy, ui, scope and actor, and declarations of its own.

        `tools` and `services` are what the component names in code (DESIGN §4): its tool layer,
        beneath the rules in force, which override it field by field. A tool it names as gated
        asks unless a rule in force explicitly turns it off. Two components on one gate never see
        each other's declarations; each sees this gate's own (`register_tool`, `@guard`) beneath
        its own."""
        view = copy.copy(self)
        declared = Declarations.of(tools, services)
        view._follow(self._gate_rules.component(declared), self.policy, self._max_auto_resume)
        return view

    @property
    def policy(self) -> Policy:
        return self._planner.policy

    @policy.setter
    def policy(self, policy: Policy) -> None:
        self._planner.policy = policy

    # -- rules --------------------------------------------------------------------------------

    @property
    def rules_refresh(self) -> float:
        return self._gate_rules.refresh

    @rules_refresh.setter
    def rules_refresh(self, seconds: float) -> None:
        self._gate_rules.refresh = seconds

    def register_tool(self, name: str, entry: ToolEntry) -> None:
        """Declare a tool's own default in code, for this gate (one component: see `component`);
        the rules' entry for the tool wins field by field."""
        self._gate_rules.register_tool(name, entry)

    def declaration(self, name: str) -> ToolEntry | None:
        """The tool's own default as this gate declared it in code (None: it declared none)."""
        return self._gate_rules.declaration(name)

    def register_service(self, name: str, entry: ServiceEntry) -> None:
        """Declare a service (the tools named `name.<tool>`) in code, for this gate (one
        component: see `component`); the rules' entry for the service wins field by field."""
        self._gate_rules.register_service(name, entry)

    def rules(self) -> RuleSet:
        return self.resolver().rules

    def resolver(self) -> Resolver:
        return self._gate_rules.resolver()

    def explain(
        self,
        tool: str,
        *,
        agent: str | None = None,
        app: str | None = None,
        args: dict[str, Any] | None = None,
        requester: str | None = None,
        annotations: Mapping[str, Any] | None = None,
    ) -> Explanation:
        """Would this call ask, with which decisions, and which layer said so."""
        return self._gate_rules.resolver().explain(tool, agent, app, args, requester, annotations)

    def may_ask(self, tool: str, agent: str | None = None, app: str | None = None) -> bool:
        """False when the rules in force ask about no call of `tool` by `agent` in `app`, whatever
        its args and requester (no `when` is evaluated): an adapter's check after `asks_nowhere`.
        One cached lookup per (tool, agent, app) until the rules change (a new `Resolver` then)."""
        return self._gate_rules.may_ask(tool, agent, app)

    # -- scope --------------------------------------------------------------------------------

    @contextmanager
    def scope(self, scope: Scope | None = None, **fields: Any) -> Iterator[Scope]:
        """Run guarded calls inside `scope` (or a Scope built from `fields`)."""
        chosen = scope if scope is not None else Scope(**fields)
        token = current_scope.set(ScopeState(chosen))
        try:
            yield chosen
        finally:
            current_scope.reset(token)
