"""A destructive call is asked about once more in the inbox: a rule's `confirm: true`, or the
tool's own `destructiveHint: true` (an MCP tool's annotations), makes the request's rule
`confirm`, kept with the request (locally and through a server) and shown in its JSON; bad values
are refused with the field named and change nothing."""

from __future__ import annotations

import pytest

from signoff import ConfigError, Gate, Pending, RuleSet, Scope, Store, ToolCall
from signoff.backend import Backend
from signoff.rules import Resolver
from signoff.rules.effective import RequestRule
from signoff.rules.snapshot import parse_snapshot

from .live import LiveServer

DESTRUCTIVE = {"readOnlyHint": False, "destructiveHint": True}
RULES = """
tools:
  drop_table: {requires_approval: true, confirm: true}
  send_email: {requires_approval: true}
  wipe: {requires_approval: true, confirm: true}
agents:
  cleaner: {interrupt_on: {wipe: {confirm: false}}}
"""


def test_confirm_is_a_rule_setting_that_later_layers_may_turn_off() -> None:
    rules = Resolver(RuleSet.from_yaml(RULES))
    assert rules.explain("drop_table").rule.confirm is True
    assert rules.explain("send_email").rule.confirm is False
    assert rules.explain("wipe").rule.confirm is True
    assert rules.explain("wipe", "cleaner").rule.confirm is False
    assert rules.explain("drop_table").rule.for_request().confirm is True


def test_a_confirm_that_is_not_true_or_false_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"tools\.drop_table\.confirm"):
        RuleSet.from_yaml("tools:\n  drop_table: {requires_approval: true, confirm: [yes]}\n")
    with pytest.raises(ConfigError, match=r"rule\.confirm must be true or false"):
        parse_snapshot({"confirm": "yes"})
    assert parse_snapshot({"confirm": True}).confirm is True


def test_the_tools_destructive_hint_confirms_and_cannot_take_a_rules_confirm_away() -> None:
    plain = RequestRule()
    assert plain.for_annotations(DESTRUCTIVE).confirm is True
    assert plain.for_annotations({"destructiveHint": "true"}).confirm is False  # only `true` counts
    assert plain.for_annotations({"readOnlyHint": True}) is plain
    assert plain.for_annotations(None) is plain
    assert RequestRule(confirm=True).for_annotations({"destructiveHint": False}).confirm is True


def test_the_request_keeps_confirm_locally_and_through_a_server(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RuleSet.from_yaml(RULES))
    scope = Scope(thread_id="t-confirm")
    asked = {
        "rule": gate.submit(ToolCall(name="drop_table", id="1", args={"table": "users"}), scope),
        "hint": gate.submit(ToolCall(name="send_email", id="2", annotations=DESTRUCTIVE), scope),
        "read-only": gate.submit(
            ToolCall(name="send_email", id="3", annotations={"readOnlyHint": True}), scope
        ),
        "plain": gate.submit(ToolCall(name="send_email", id="4"), scope),
    }
    kept = {}
    for name, pending in asked.items():
        assert isinstance(pending, Pending), name
        stored = store.get_request(pending.request.id)
        assert stored.rule.confirm is pending.request.rule.confirm
        assert stored.to_dict()["confirm"] is stored.rule.confirm
        kept[name] = stored.rule.confirm
    assert kept == {"rule": True, "hint": True, "read-only": False, "plain": False}


def test_a_servers_confirm_holds_for_an_agent_that_does_not_say_it(sqlite_server: LiveServer) -> None:
    sqlite_server.store.replace_rules(RuleSet.from_yaml(RULES), actor="test")
    with sqlite_server.client(sqlite_server.user("bot", "agent")) as bot:
        base = {"thread_id": "t", "tool": "drop_table", "args": {"table": "users"}}
        own_rule = {"allowed_decisions": ["approve", "reject"], "confirm": False}
        created = bot.post("/v1/requests", json={**base, "tool_call_id": "a", "rule": own_rule})
        assert created.status_code == 201, created.text
        assert created.json()["confirm"] is True
        refused = bot.post("/v1/requests", json={**base, "tool_call_id": "b", "rule": {"confirm": 1}})
        assert refused.status_code == 422 and "rule.confirm" in refused.text
        assert sqlite_server.store.find_request("t", "b", created_by="bot") is None
        hinted = bot.post(
            "/v1/requests",
            json={
                "thread_id": "t",
                "tool_call_id": "c",
                "tool": "lookup",
                "args": {},
                "tool_annotations": DESTRUCTIVE,
            },
        )
        assert hinted.status_code == 201 and hinted.json()["confirm"] is True
