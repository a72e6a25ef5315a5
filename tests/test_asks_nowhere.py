"""`asks_nowhere(tool)`: no call of the tool is asked about, for any agent, app, args or requester:
the one check an adapter's call pays when nobody is asked. It must never say True for a tool some
call of which would be asked about (the adapters let such calls through unread)."""

from __future__ import annotations

import time
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from signoff import Backend, Gate, RuleSet, Store, ToolEntry
from signoff.rules import Resolver

from .test_properties import PROPERTY, TOOLS, agent_entries, app_entries, tool_layers

AGENTS = ("support", "ops", "*")
APPS = ("acme", "beta", "*")
NAMES = (None, *AGENTS, *APPS, "nobody-named-this")
"""Agents and apps to try: unnamed, named in the rules, the wildcard's own name, unknown."""


def nowhere(rules: dict[str, Any], tool: str) -> bool:
    return Resolver(RuleSet.from_dict(rules)).asks_nowhere(tool)


def asked_anywhere(resolver: Resolver, tool: str) -> bool:
    """The brute force: some agent and app (named, wildcard, unknown or none) whose rule asks."""
    return any(resolver.static(tool, agent, app).ask for agent in NAMES for app in NAMES)


@PROPERTY
@given(
    tools=tool_layers,
    agents=st.dictionaries(st.sampled_from(AGENTS), agent_entries, max_size=3),
    apps=st.dictionaries(st.sampled_from(APPS), app_entries, max_size=3),
    tool=st.sampled_from((*TOOLS, "unnamed_tool")),
)
def test_asks_nowhere_is_true_exactly_when_no_agent_and_app_would_ask(
    tools: dict[str, Any], agents: dict[str, Any], apps: dict[str, Any], tool: str
) -> None:
    resolver = Resolver(RuleSet.from_dict({"tools": tools, "agents": agents, "apps": apps}))
    assert resolver.asks_nowhere(tool) is not asked_anywhere(resolver, tool)
    if resolver.asks_nowhere(tool):
        for agent in NAMES:
            for app in NAMES:
                assert not resolver.explain(tool, agent, app, {"n": 5}, "alice").ask
    assert resolver.nowhere[tool] is resolver.asks_nowhere(tool), "cached per tool"


def test_the_tool_layer_alone() -> None:
    rules = {"tools": {"send_email": {"requires_approval": True}, "search": {"requires_approval": False}}}
    assert nowhere(rules, "send_email") is False
    assert nowhere(rules, "search") is True
    assert nowhere(rules, "never_mentioned") is True
    assert nowhere({"tools": {"*": {"requires_approval": True}}}, "never_mentioned") is False


def test_an_agent_or_app_that_turns_a_tool_on_makes_it_asked_somewhere() -> None:
    assert nowhere({"agents": {"strict": {"interrupt_on": {"search": True}}}}, "search") is False
    assert nowhere({"apps": {"prod": {"interrupt_overrides": {"search": {"quorum": 2}}}}}, "search") is False
    assert nowhere({"agents": {"strict": {"interrupt_on": {"search": False}}}}, "search") is True
    on_for_all_but_one = {
        "tools": {"search": {"requires_approval": True}},
        "agents": {"relaxed": {"interrupt_on": {"search": False}}},
    }
    assert nowhere(on_for_all_but_one, "search") is False, "the other agents still ask"


def test_silence_counts_only_where_it_covers_every_agent_or_app() -> None:
    on = {"tools": {"search": {"requires_approval": True}}}
    assert nowhere({**on, "agents": {"quiet": {"hitl_disabled": True}}}, "search") is False
    assert nowhere({**on, "agents": {"*": {"hitl_disabled": True}}}, "search") is True
    assert nowhere({**on, "apps": {"*": {"hitl_disabled": True}}}, "search") is True
    silenced_but_one = {**on, "apps": {"*": {"hitl_disabled": True}, "prod": {"hitl_disabled": False}}}
    assert nowhere(silenced_but_one, "search") is False


def test_hitl_required_asks_even_where_everything_else_is_silenced() -> None:
    rules = {
        "tools": {"transfer": {"requires_approval": False}},
        "agents": {"*": {"hitl_disabled": True}},
        "apps": {"bank": {"hitl_required": ["transfer"]}},
    }
    assert nowhere(rules, "transfer") is False
    assert nowhere(rules, "search") is True


def test_a_services_approval_mode_decides_for_its_tools() -> None:
    def service(mode: str, **fields: Any) -> dict[str, Any]:
        return {"services": {"github": {"requires_approval": True, "approval_mode": mode, **fields}}}

    assert nowhere(service("all"), "github.create_issue") is False
    assert nowhere(service("all"), "gitlab.create_issue") is True
    assert nowhere(service("whitelist", tools=["delete_repo"]), "github.delete_repo") is False
    assert nowhere(service("whitelist", tools=["delete_repo"]), "github.list_issues") is True
    assert nowhere(service("blacklist", tools=["list_issues"]), "github.list_issues") is True
    assert nowhere(service("blacklist", tools=["list_issues"]), "github.delete_repo") is False
    # read-only is a per-call annotation: some call without it asks
    assert nowhere(service("unless_read_only"), "github.list_issues") is False
    off = {"services": {"github": {"requires_approval": False, "approval_mode": "all"}}}
    assert nowhere(off, "github.delete_repo") is True


def test_a_when_condition_could_say_yes_so_the_tool_may_be_asked_about() -> None:
    rules = {"tools": {"transfer": {"requires_approval": True, "when": "args.amount > 1000"}}}
    resolver = Resolver(RuleSet.from_dict(rules))
    assert resolver.asks_nowhere("transfer") is False
    assert resolver.explain("transfer", args={"amount": 5}).ask is False


def test_code_declared_tools_and_the_stores_rules_over_them(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules_refresh=0.0)
    assert gate.asks_nowhere("transfer") is True
    gate.register_tool("transfer", ToolEntry(requires_approval=True))
    assert gate.asks_nowhere("transfer") is False, "a tool declared in code is seen at once"
    store.set_layer("tool", "transfer", {"requires_approval": False}, actor="admin")
    assert gate.asks_nowhere("transfer") is True, "the store's tool entry overrides the code's"
    fixed = Gate(backend, rules=RuleSet.from_dict({"tools": {"search": {"requires_approval": True}}}))
    fixed.register_tool("transfer", ToolEntry(requires_approval=True))
    assert fixed.asks_nowhere("transfer") is False and fixed.asks_nowhere("search") is False
    assert fixed.asks_nowhere("lookup") is True


def test_a_rule_switched_on_in_the_store_is_seen_within_rules_refresh(backend: Backend, store: Store) -> None:
    refresh = 0.3
    gate = Gate(backend, rules_refresh=refresh)
    assert gate.asks_nowhere("search") is True
    changed_at = time.monotonic()
    store.set_layer("agent", "strict", {"interrupt_on": {"search": True}}, actor="ops")
    while gate.asks_nowhere("search"):
        assert time.monotonic() - changed_at < refresh + 0.5, "the change was not seen within rules_refresh"
        time.sleep(0.01)
    assert gate.may_ask("search", "strict") is True and gate.may_ask("search", "relaxed") is False
    store.set_layer("agent", "strict", {"interrupt_on": {}}, actor="ops")
    while not gate.asks_nowhere("search"):
        assert time.monotonic() - changed_at < 2 * refresh + 1.0, "switching it off again was not seen"
        time.sleep(0.01)
