"""Rules declared in code belong to their component (DESIGN §4): the rules in force lie over them
field by field, a named tool asks unless a rule explicitly turns it off, a component's own
decisions stay as given, and a service's tools are found by their bare names too."""

from __future__ import annotations

from typing import Any

import pytest

from signoff import ConfigError, Gate, RuleSet, ServiceEntry, ToolEntry
from signoff.rules import Resolver
from signoff.store import SQLiteStore

GATED = ToolEntry(requires_approval=True, allowed_decisions=["edit", "reject"], description="code {to}")


def component(store: SQLiteStore, rules: dict[str, Any], **tools: ToolEntry) -> Gate:
    return Gate(store, rules=RuleSet.from_dict(rules)).component(tools=tools)


# -- the rules in force over a declaration ------------------------------------------------------


def test_a_rule_that_writes_other_settings_keeps_the_tool_asked(sqlite_store: SQLiteStore) -> None:
    """A stored entry that sets only the card used to replace the declaration whole (and with
    it `requires_approval`): the tool ran unasked."""
    found = component(
        sqlite_store,
        {"tools": {"send_email": {"description": "rules {to}", "approvers": ["ops"]}}},
        send_email=GATED,
    ).explain("send_email")
    assert found.ask is True
    assert found.rule.description == "rules {to}"  # the rule's field wins
    assert found.rule.approvers == ("ops",)
    assert found.rule.allowed_decisions == ("edit", "reject")  # the code's field stays, as given


def test_only_an_explicit_rule_turns_a_named_tool_off(sqlite_store: SQLiteStore) -> None:
    named = {"send_email": GATED}
    assert (
        component(sqlite_store, {"tools": {"send_email": {"requires_approval": False}}}, **named)
        .explain("send_email")
        .ask
        is False
    )
    listed = {"tools": {'["send_email", "x"]': {"requires_approval": False}}}
    assert component(sqlite_store, listed, **named).explain("send_email").ask is False
    for loose in ("*", "send_*"):  # a glob does not name the tool: it neither turns it off ...
        found = component(sqlite_store, {"tools": {loose: {"requires_approval": False}}}, **named)
        assert found.explain("send_email").ask is True
    off_for_agent = {"agents": {"nightly": {"interrupt_on": {"send_email": False}}}}
    assert component(sqlite_store, off_for_agent, **named).explain("send_email", agent="nightly").ask is False
    silenced = {"apps": {"acme": {"hitl_disabled": True}}}
    assert component(sqlite_store, silenced, **named).explain("send_email", app="acme").ask is False


def test_a_rule_that_says_ask_is_not_undone_by_a_declaration_that_says_no(sqlite_store: SQLiteStore) -> None:
    quiet = ToolEntry(requires_approval=False)
    rules = {"tools": {"send_email": {"requires_approval": True}}}
    assert component(sqlite_store, rules, send_email=quiet).explain("send_email").ask is True


def test_a_declared_service_lies_beneath_the_rules_service_entry(sqlite_store: SQLiteStore) -> None:
    gate = Gate(sqlite_store, rules=RuleSet()).component(services={"notes": ServiceEntry()})
    asked = gate.explain("notes.delete_note")
    assert (asked.ask, asked.layer, asked.deciding_key) == (True, "service", "notes")
    narrowed = Gate(
        sqlite_store, rules=RuleSet.from_dict({"services": {"notes": {"approval_mode": "whitelist"}}})
    ).component(services={"notes": ServiceEntry()})
    assert narrowed.explain("notes.delete_note").ask is False  # the rules' mode wins
    off = Gate(
        sqlite_store, rules=RuleSet.from_dict({"services": {"notes": {"requires_approval": False}}})
    ).component(services={"notes": ServiceEntry()})
    assert off.explain("notes.read_note").ask is False


# -- components ---------------------------------------------------------------------------------


def test_components_see_the_gates_own_declarations_even_made_later(sqlite_store: SQLiteStore) -> None:
    gate = Gate(sqlite_store, rules=RuleSet())
    first = gate.component()
    assert first.asks_nowhere("wire") is True
    gate.register_tool("wire", ToolEntry(requires_approval=True))
    assert first.asks_nowhere("wire") is False  # its kept answer was forgotten
    assert first.explain("wire").ask is True
    own = gate.component(tools={"wire": ToolEntry(requires_approval=False)})
    assert own.explain("wire").ask is False  # its own declaration lies over the gate's


def test_siblings_never_see_each_others_declarations(sqlite_store: SQLiteStore) -> None:
    gate = Gate(sqlite_store, rules=RuleSet())
    asks = gate.component(tools={"write_file": ToolEntry(requires_approval=True)})
    quiet = gate.component(tools={"write_file": ToolEntry(requires_approval=False)})
    assert (asks.explain("write_file").ask, quiet.explain("write_file").ask) == (True, False)
    assert gate.explain("write_file").ask is False  # nor does the gate see theirs
    assert asks.store is gate.store and asks.policy is gate.policy


def test_two_guards_declaring_one_tool_differently_on_one_gate_are_refused(sqlite_store: SQLiteStore) -> None:
    gate = Gate(sqlite_store)

    @gate.guard(name="deploy")
    def deploy(env: str) -> str:
        return env

    gate.guard(name="deploy")(lambda env: env)  # the same declaration again is fine
    with pytest.raises(ConfigError, match="declared twice"):
        gate.guard(name="deploy", requires_approval=False)(lambda env: env)
    # on components of their own, each keeps its own
    gate.component().guard(name="deploy", requires_approval=False)(lambda env: env)


# -- allowed decisions --------------------------------------------------------------------------


def test_a_rule_layer_gets_approve_and_says_so(sqlite_store: SQLiteStore) -> None:
    rules = {
        "agents": {"support": {"interrupt_on": {"send_email": {"allowed_decisions": ["edit", "reject"]}}}}
    }
    found = Gate(sqlite_store, rules=RuleSet.from_dict(rules)).explain("send_email", agent="support")
    assert found.allowed_decisions == ("approve", "edit", "reject")
    [agent_step] = [step for step in found.trace if step.layer == "agent"]
    assert "approve added (rule layers always allow approve)" in agent_step.said
    stored = RuleSet.from_dict(rules).to_dict()  # kept as written
    assert stored["agents"]["support"]["interrupt_on"]["send_email"]["allowed_decisions"] == [
        "edit",
        "reject",
    ]


def test_a_components_decisions_stay_as_given_until_a_rule_layer_writes_them(
    sqlite_store: SQLiteStore,
) -> None:
    mine = component(sqlite_store, {}, send_email=GATED).explain("send_email")
    assert mine.allowed_decisions == ("edit", "reject")
    assert not any("approve added" in step.said for step in mine.trace)
    overridden = component(
        sqlite_store, {"tools": {"send_email": {"allowed_decisions": ["respond"]}}}, send_email=GATED
    ).explain("send_email")
    assert overridden.allowed_decisions == ("approve", "respond")


# -- services by their tools' bare names --------------------------------------------------------


def test_a_bare_name_listed_by_one_service_takes_its_rule() -> None:
    rules = RuleSet.from_dict(
        {"services": {"tavily": {"approval_mode": "whitelist", "tools": ["tavily_crawl"], "deadline": "1h"}}}
    )
    found = Resolver(rules).explain("tavily_crawl")
    assert (found.ask, found.layer, found.deciding_key) == (True, "service", "tavily")
    assert found.rule.deadline.total_seconds() == 3600
    assert "'tavily_crawl' is listed by the service" in found.trace[-1].said
    assert Resolver(rules).explain("tavily.tavily_crawl").ask is True  # the proxy's naming still
    assert Resolver(rules).explain("tavily_search").ask is False  # not listed: no service knows it


def test_a_bare_name_listed_by_services_that_disagree_asks() -> None:
    rules = RuleSet.from_dict(
        {
            "services": {
                "tavily": {"approval_mode": "blacklist", "tools": ["crawl"]},
                "scraper": {"approval_mode": "whitelist", "tools": ["crawl"], "approvers": ["ops"]},
            }
        }
    )
    found = Resolver(rules).explain("crawl")
    assert (found.ask, found.deciding_key, found.rule.approvers) == (True, "scraper", ("ops",))
    assert "which disagree, so it asks" in found.trace[-1].said
    agree = RuleSet.from_dict(
        {
            "services": {
                "a": {"approval_mode": "blacklist", "tools": ["crawl"]},
                "b": {"approval_mode": "blacklist", "tools": ["b.crawl"]},
            }
        }
    )
    assert Resolver(agree).explain("crawl").ask is False
