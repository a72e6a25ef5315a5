"""Whether to ask about a call, and the trace of which layer said so (DESIGN §4).

For (tool, agent, app, args):
1. the app's `hitl_required` lists the tool → ask; nothing silences it;
2. the agent's or the app's `hitl_disabled` → don't ask (OR-merged: the app cannot force on
   what the agent silenced);
3. start from the tool layer (service mode applied), overlay the agent's `interrupt_on` entry,
   then the app's `interrupt_overrides`: `false` turns off, `true` turns on with the settings
   beneath (all decisions if none), a mapping turns on with its fields; later layers win;
4. a service in `approval_mode: unless_read_only` that has the last word does not ask about a
   tool whose annotations say `readOnlyHint: true` (unless its `tools` list names the tool);
5. a `when` condition (CEL, or a Python callable in code) asks only if it is true.

Everything but steps 4 and 5 depends on (tool, agent, app) alone, so it is computed once per
triple and cached; only the annotations and the condition are looked at per call. Whether a tool
is asked about nowhere (for no agent, app, args or requester) is cached per tool: the one check an
adapter's call pays when nobody is asked (`asks_nowhere`).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import replace
from datetime import timedelta
from typing import Any

from ..decisions import DECISION_TYPES, DecisionType
from .callables import WhenInput, call_when, python_name, shown
from .conditions import evaluate_condition
from .effective import (
    DEFAULT_CHANNELS,
    INBOX_CHANNEL,
    REQUESTER,
    Rule,
    Separation,
)
from .explanation import Explanation, TraceStep
from .keys import KeyIndex, Match
from .model import AgentEntry, AppEntry, RuleSet, ServiceEntry, ToolEntry, ToolSwitch
from .schedule_model import escalations_of
from .services import (
    is_listed,
    listed_by_bare_name,
    more_specific_than_service,
    read_only_says,
    service_says,
)
from .settings import RuleSettings


class Resolver:
    """Resolves calls against one `RuleSet`. Thread-safe; caches per (tool, agent, app)."""

    def __init__(self, rules: RuleSet, *, as_given: frozenset[str] = frozenset()) -> None:
        self.rules = rules
        self._as_given = as_given
        """Tools declared in code whose allowed decisions stay as the component gave them."""
        self._tools: KeyIndex[ToolEntry] = KeyIndex(rules.tools)
        self._agents: dict[str, tuple[AgentEntry, KeyIndex[ToolSwitch]]] = {
            name: (entry, KeyIndex(entry.interrupt_on)) for name, entry in rules.agents.items()
        }
        self._apps: dict[str, tuple[AppEntry, KeyIndex[ToolSwitch], KeyIndex[bool]]] = {
            name: (
                entry,
                KeyIndex(entry.interrupt_overrides),
                KeyIndex((key, True) for key in entry.hitl_required),
            )
            for name, entry in rules.apps.items()
        }
        self._services = sorted(rules.services.items(), key=lambda item: -len(item[0]))
        self._listed_bare = listed_by_bare_name(self._services)
        self._cache: dict[tuple[str, str | None, str | None], Explanation] = {}
        self._lock = threading.Lock()
        self.nowhere: dict[str, bool] = {}
        """`asks_nowhere`'s answers so far, per tool: read it first (a miss: call `asks_nowhere`)."""

    def static(self, tool: str, agent: str | None, app: str | None) -> Explanation:
        """The answer before any `when` condition is applied (cached)."""
        key = (tool, agent, app)
        found = self._cache.get(key)
        if found is None:
            found = self._compute(tool, agent, app)
            with self._lock:
                if len(self._cache) > 50_000:
                    self._cache.clear()
                self._cache[key] = found
        return found

    def asks_nowhere(self, tool: str) -> bool:
        """True when no call of `tool` is asked about under these rules, whatever its agent, app,
        args, requester or annotations (so nothing about the call needs reading); cached per tool.

        Exact, not a guess: before any `when`, an answer depends on the agent only through its
        entry's word on the tool (none, off, on) and its `hitl_disabled`, and on the app through
        its override's word, its `hitl_required` and its `hitl_disabled`; an agent or app the rules
        do not name gets the `*` entry, as None does. So one agent (and app) per kind of word,
        plus None, stands for them all; a `when` or a read-only exemption only ever says no."""
        found = self.nowhere.get(tool)
        if found is None:
            agents = _one_per_word(
                (name, (_word(index.match(tool)), entry.hitl_disabled))
                for name, (entry, index) in self._agents.items()
            )
            apps = _one_per_word(
                (name, (_word(overrides.match(tool)), required.match(tool) is not None, entry.hitl_disabled))
                for name, (entry, overrides, required) in self._apps.items()
            )
            found = not any(self.static(tool, agent, app).ask for agent in agents for app in apps)
            if len(self.nowhere) > 50_000:
                self.nowhere.clear()
            self.nowhere[tool] = found
        return found

    def explain(
        self,
        tool: str,
        agent: str | None = None,
        app: str | None = None,
        args: dict[str, Any] | None = None,
        requester: str | None = None,
        annotations: Mapping[str, Any] | None = None,
    ) -> Explanation:
        static = self._cache.get((tool, agent, app)) or self.static(tool, agent, app)
        if not static.ask or static.rule.required:
            return static
        if static.read_only_exempt:
            static = read_only_says(static, annotations)
            if not static.ask:
                return static
        when = static.rule.when
        if when is None:
            return static
        marks = dict(annotations or {})
        if callable(when):
            facts = WhenInput(
                args=args or {}, tool=tool, agent=agent, app=app, requester=requester, tool_annotations=marks
            )
            result = call_when(when, facts)
            condition = python_name(when)
        else:
            context = {
                "args": args or {},
                "tool": tool,
                "agent": agent,
                "app": app,
                "requester": requester,
                "tool_annotations": marks,
            }
            result = evaluate_condition(when, context)
            condition = f"`{when}`"
        said = f"when {condition} {result.error or f'is {str(result.value).lower()}'}"
        step = TraceStep("when", None, said)
        if result.value:
            return replace(static, trace=(*static.trace, step))
        return replace(static, ask=False, layer="when", trace=(*static.trace, step))

    def _compute(self, tool: str, agent_name: str | None, app_name: str | None) -> Explanation:
        defaults = self.rules.defaults
        trace: list[TraceStep] = []
        settings: dict[str, Any] = {}
        on = False
        layer = "default"
        trace.append(TraceStep("default", None, "no layer asks by default"))

        service, said = self._service_for(tool)
        read_only_exempt = False
        decisions_step: int | None = None  # the trace step of the rule layer that wrote the decisions
        if service is not None:
            name, entry = service
            on, says = service_says(tool, name, entry)
            said = f"{said}{says}"
            read_only_exempt = (
                on and entry.approval_mode == "unless_read_only" and not is_listed(tool, *service)
            )
            settings.update(entry.fields_set())
            layer = "service"
            if "allowed_decisions" in entry.fields_set():
                decisions_step = len(trace)
            trace.append(TraceStep("service", name, said))

        tool_match = self._tools.match(tool)
        if tool_match is not None:
            entry_t = tool_match.value
            said = f"requires_approval={str(entry_t.requires_approval).lower()}"
            if service is None or more_specific_than_service(tool_match, service[0]):
                settings.update(entry_t.fields_set())
                if "allowed_decisions" in entry_t.fields_set():
                    own = tool_match.kind == "exact" and tool_match.key in self._as_given
                    decisions_step = None if own else len(trace)
                if "requires_approval" in entry_t.model_fields_set or service is None:
                    on = entry_t.requires_approval
                    layer = "tool"
                else:
                    said = "no requires_approval: the service decides"
            else:
                # `*` (or a looser glob) names the service's tools less precisely than the
                # service does: its settings lie beneath the service's, and it doesn't switch.
                if "allowed_decisions" not in settings and "allowed_decisions" in entry_t.fields_set():
                    decisions_step = len(trace)
                settings = {**entry_t.fields_set(), **settings}
                said += f" (less specific than service {service[0]!r}, which decides)"
            trace.append(TraceStep("tool", tool_match.key, said))

        agent = self._lookup(self._agents, agent_name)
        if agent is not None:
            _, agent_index = agent
            match = agent_index.match(tool)
            if match is not None:
                if _sets_decisions(match.value):
                    decisions_step = len(trace)
                on, said = _overlay(match.value, settings)
                layer = "agent"
                trace.append(TraceStep("agent", match.key, f"interrupt_on: {said}"))

        app = self._lookup(self._apps, app_name)
        required = False
        if app is not None:
            _, app_index, required_index = app
            match = app_index.match(tool)
            if match is not None:
                if _sets_decisions(match.value):
                    decisions_step = len(trace)
                on, said = _overlay(match.value, settings)
                layer = "app"
                trace.append(TraceStep("app", match.key, f"interrupt_overrides: {said}"))
            required_match = required_index.match(tool)
            if required_match is not None:
                required = True

        agent_silenced = agent is not None and agent[0].hitl_disabled
        app_silenced = app is not None and app[0].hitl_disabled
        if required:
            on = True
            layer = "app.hitl_required"
            trace.append(
                TraceStep("app.hitl_required", app_name, "hitl_required lists this tool: always ask")
            )
        elif agent_silenced or app_silenced:
            on = False
            layer = "agent.hitl_disabled" if agent_silenced else "app.hitl_disabled"
            who = " and ".join(
                name for name, silenced in (("agent", agent_silenced), ("app", app_silenced)) if silenced
            )
            trace.append(TraceStep(layer, None, f"hitl_disabled on the {who}: silenced (OR-merged)"))

        allowed = _allowed_decisions(settings.get("allowed_decisions"), decisions_step, trace)
        rule = Rule(
            ask=on,
            allowed_decisions=allowed,
            description=settings.get("description") or defaults.description,
            description_prefix=(agent[0].description_prefix if agent is not None else None)
            or defaults.description_prefix,
            when=settings.get("when"),
            approvers=_approvers(settings),
            channels=tuple(settings.get("channels") or DEFAULT_CHANNELS),
            deadline=settings.get("deadline") or defaults.deadline,
            on_expire=settings.get("on_expire") or defaults.on_expire,
            expire_message=settings.get("expire_message") or defaults.expire_message,
            quorum=settings.get("quorum") or 1,
            redact=tuple(settings.get("redact") or ()),
            reject_template=settings.get("reject_template") or defaults.reject_template,
            modify_template=settings.get("modify_template") or defaults.modify_template,
            feedback_template=settings.get("feedback_template") or defaults.feedback_template,
            unattended=settings.get("unattended") or defaults.unattended,
            confirm=bool(settings.get("confirm", False)),
            separation=_separation(settings),
            batch=settings.get("batch") is not False,
            max_grant=_max_grant(settings, required, app[0] if app is not None else None),
            remind=tuple(settings.get("remind") or ()),
            escalate=escalations_of(settings.get("escalate")),
            required=required,
        )
        exempt = read_only_exempt and on and layer == "service" and not required
        return Explanation(tool, agent_name, app_name, on, layer, rule, tuple(trace), read_only_exempt=exempt)

    def _service_for(self, tool: str) -> tuple[tuple[str, ServiceEntry] | None, str]:
        """The service whose rule covers `tool`, and what the trace says of how it was found.

        `SERVICE.<tool>` (the MCP proxy's naming) belongs to that service. A bare name (a tool
        an agent calls by its own name) belongs to the service whose `tools` list names it; a
        name listed under several services whose answers differ takes the one that asks."""
        for name, entry in self._services:
            if tool.startswith(name + "."):
                return (name, entry), ""
        listing = self._listed_bare.get(tool)
        if not listing:
            return None, ""
        if len(listing) == 1:
            return listing[0], f"{tool!r} is listed by the service: "
        answers = [service_says(tool, name, entry)[0] for name, entry in listing]
        names = ", ".join(repr(name) for name, _ in listing)
        if len(set(answers)) == 1:
            return listing[0], f"{tool!r} is listed by services {names}, which agree: "
        chosen = listing[answers.index(True)]
        return chosen, f"{tool!r} is listed by services {names}, which disagree, so it asks: "

    @staticmethod
    def _lookup(table: dict[str, Any], name: str | None) -> Any:
        if name is not None and name in table:
            return table[name]
        return table.get("*")


def _word(match: Match[Any] | None) -> bool | None:
    """What a layer's entry says about the tool, as far as asking goes: nothing, off, or on."""
    return None if match is None else match.value is not False


def _one_per_word(named: Iterable[tuple[str, Hashable]]) -> list[str | None]:
    """None, and the first name of each word the others do not share (see `asks_nowhere`)."""
    seen: dict[Hashable, str] = {}
    for name, word in named:
        seen.setdefault(word, name)
    return [None, *seen.values()]


def _sets_decisions(switch: ToolSwitch) -> bool:
    return isinstance(switch, RuleSettings) and "allowed_decisions" in switch.fields_set()


def _allowed_decisions(
    given: list[DecisionType] | None, rule_layer_step: int | None, trace: list[TraceStep]
) -> tuple[DecisionType, ...]:
    """The decisions a person may make: all four when nobody says; a component's own list as
    given; a rule layer's list with approve added (seed 004), noted on that layer's step."""
    if given is None:
        return DECISION_TYPES
    if rule_layer_step is None or "approve" in given:
        return tuple(kind for kind in DECISION_TYPES if kind in given)
    step = trace[rule_layer_step]
    trace[rule_layer_step] = replace(
        step, said=f"{step.said}; approve added (rule layers always allow approve)"
    )
    return tuple(kind for kind in DECISION_TYPES if kind in given or kind == "approve")


def _overlay(switch: ToolSwitch, settings: dict[str, Any]) -> tuple[bool, str]:
    if switch is False:
        return False, "false (turned off)"
    if switch is True:
        return True, "true (on, with the settings beneath)"
    assert isinstance(switch, RuleSettings)
    fields_set = switch.fields_set()
    settings.update(fields_set)
    said = ", ".join(f"{name}={shown(value)}" for name, value in fields_set.items()) or "no fields"
    return True, f"on with {said}"


def _separation(settings: dict[str, Any]) -> Separation | None:
    said = settings.get("separation")
    return None if said in (None, "none") else said


def _approvers(settings: dict[str, Any]) -> tuple[str, ...]:
    """The rule's approvers; a rule that tells people on a channel other than the inbox and
    names nobody is decided by the requester (seed 004: only the user the agent acts for)."""
    named = tuple(settings.get("approvers") or ())
    if named:
        return named
    if any(channel != INBOX_CHANNEL for channel in settings.get("channels") or ()):
        return (REQUESTER,)
    return ()


def _max_grant(settings: Mapping[str, Any], required: bool, app: AppEntry | None) -> timedelta | None:
    """The rule's `max_grant`, where grants may be at all: never with a quorum over 1, and for a
    `hitl_required` tool only where the app's `grants_for_required` allows it."""
    if (settings.get("quorum") or 1) > 1:
        return None
    if required and not (app is not None and app.grants_for_required):
        return None
    limit: timedelta | None = settings.get("max_grant")
    return limit
