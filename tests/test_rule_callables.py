"""In code, `when` and `description` may be Python callables (issue 9, item 6); rules that are
stored, written to a file or sent anywhere never hold one."""

from __future__ import annotations

from typing import Any

import pytest

from signoff import (
    AgentEntry,
    Backend,
    ConfigError,
    DescriptionInput,
    Gate,
    Pending,
    RuleSet,
    RuleSettings,
    Scope,
    ToolCall,
    ToolEntry,
    WhenInput,
)
from signoff.client import Client
from signoff.rules.resolve import Resolver
from signoff.store import Store

from .conftest import AGENT_USER
from .live import LiveServer

seen: list[WhenInput] = []


def large(call: WhenInput) -> bool:
    seen.append(call)
    return bool(call.args["amount"] > 1000)


def describe(call: DescriptionInput) -> str:
    return f"{call.prefix}: send {call.args['amount']} to {call.args['to']} (asked by {call.requester})"


TRANSFER = ToolEntry(requires_approval=True, when=large, description=describe, redact=["to"])
RULES = RuleSet(tools={"transfer": TRANSFER})


def test_a_callable_when_gets_what_cel_sees_and_decides_per_call() -> None:
    resolver = Resolver(RULES)
    seen.clear()
    big = resolver.explain("transfer", "bank-bot", "prod", {"amount": 5000, "to": "x"}, "ana")
    small = resolver.explain("transfer", "bank-bot", "prod", {"amount": 5, "to": "x"}, "ana")
    assert big.ask and not small.ask and small.layer == "when"
    assert seen == [
        WhenInput(
            args={"amount": 5000, "to": "x"}, tool="transfer", agent="bank-bot", app="prod", requester="ana"
        ),
        WhenInput(
            args={"amount": 5, "to": "x"}, tool="transfer", agent="bank-bot", app="prod", requester="ana"
        ),
    ]
    assert small.trace[-1].said == f"when <python: {__name__}.large> is false"
    assert small.to_dict()["when"] == f"<python: {__name__}.large>"
    assert big.to_dict()["description"] == f"<python: {__name__}.describe>"


def test_a_callable_when_that_raises_asks_and_says_why() -> None:
    explanation = Resolver(RULES).explain("transfer", args={"to": "x"})
    assert explanation.ask
    assert explanation.trace[-1].said == (
        f"when <python: {__name__}.large> raised KeyError: 'amount'; asking"
    )


def test_hitl_required_is_not_silenced_by_a_callable_when() -> None:
    rules = RuleSet.from_dict({"apps": {"prod": {"hitl_required": ["transfer"]}}}).model_copy(
        update={"tools": {"transfer": TRANSFER}}
    )
    assert Resolver(rules).explain("transfer", app="prod", args={"amount": 1}).ask


def test_an_agents_interrupt_on_may_say_a_callable_when() -> None:
    rules = RuleSet(agents={"bot": AgentEntry(interrupt_on={"transfer": RuleSettings(when=large)})})
    resolver = Resolver(rules)
    assert resolver.explain("transfer", "bot", args={"amount": 2000}).ask
    assert not resolver.explain("transfer", "bot", args={"amount": 1}).ask


def test_the_gate_asks_by_the_callable_and_its_description_is_the_card(backend: Backend) -> None:
    gate = Gate(backend)
    gate.register_tool("transfer", TRANSFER)
    scope = Scope(thread_id="t1", requester="ana")
    small = gate.submit(ToolCall(name="transfer", args={"amount": 5, "to": "bob"}, id="c1"), scope)
    assert not isinstance(small, Pending) and small.execute and small.request_id is None
    big = gate.submit(ToolCall(name="transfer", args={"amount": 5000, "to": "bob"}, id="c2"), scope)
    assert isinstance(big, Pending)
    request = big.request
    # the callable is given the args redacted as the card shows them
    assert request.description == "Tool execution requires approval: send 5000 to *** (asked by ana)"
    assert request.rule.description == f"<python: {__name__}.describe>"
    assert request.args == {"amount": 5000, "to": "bob"}


def test_a_callable_descriptions_text_is_shown_with_hidden_characters_escaped(store: Store) -> None:
    entry = ToolEntry(requires_approval=True, description=lambda call: f"Open\n{call.args['path']}")
    gate = Gate(store)
    gate.register_tool("open", entry)
    found = gate.submit(ToolCall(name="open", args={"path": "a\u202etxt"}, id="c1"), Scope(thread_id="t"))
    assert isinstance(found, Pending)
    assert found.request.description == "Open\na\\u202etxt"


def test_a_drafts_update_keeps_what_the_callable_wrote(store: Store) -> None:
    gate = Gate(store)
    gate.register_tool("transfer", ToolEntry(requires_approval=True, description=describe))
    draft = gate.draft(
        ToolCall(name="transfer", args={"amount": 1, "to": "bob"}, id="c1"), Scope(thread_id="t")
    )
    assert draft is not None
    updated = store.update_draft(draft.id, args={"amount": 2}, ready=True)
    assert (
        updated.description
        == draft.description
        == "Tool execution requires approval: send 1 to bob (asked by None)"
    )


CALLABLE_RULES: list[tuple[str, RuleSet]] = [
    ("tools.transfer.when", RuleSet(tools={"transfer": ToolEntry(when=large)})),
    ("tools.transfer.description", RuleSet(tools={"transfer": ToolEntry(description=describe)})),
    (
        "agents.bot.interrupt_on.transfer.when",
        RuleSet(agents={"bot": AgentEntry(interrupt_on={"transfer": RuleSettings(when=large)})}),
    ),
]


@pytest.mark.parametrize(("where", "rules"), CALLABLE_RULES)
def test_rules_with_callables_cannot_be_written_down(where: str, rules: RuleSet, store: Store) -> None:
    named = rf"{where} is a Python callable \(<python: {__name__}\.\w+>\)"
    with pytest.raises(ConfigError, match=named):
        rules.to_yaml()  # a rules file
    with pytest.raises(ConfigError, match=named):
        store.replace_rules(rules, actor="ops")
    assert store.load_rules() == RuleSet()


def test_the_store_refuses_a_layer_entry_with_a_callable(store: Store) -> None:
    with pytest.raises(ConfigError, match=r"tools\.transfer\.when is a Python callable .* a CEL condition"):
        store.set_layer("tool", "transfer", {"requires_approval": True, "when": large}, actor="ops")
    with pytest.raises(ConfigError, match=r"apps\.prod\.interrupt_overrides\.transfer\.description"):
        store.set_layer(
            "app", "prod", {"interrupt_overrides": {"transfer": {"description": describe}}}, actor="ops"
        )
    assert store.get_layer("tool", "transfer") is None and store.get_layer("app", "prod") is None


def test_a_client_refuses_to_send_rules_with_callables(live_server: LiveServer, store: Store) -> None:
    with Client(live_server.url, live_server.user("ops", role="admin")) as client:
        with pytest.raises(ConfigError, match=r"tools\.transfer\.when is a Python callable"):
            client.replace_rules(RULES)
        with pytest.raises(ConfigError, match=r"tools\.transfer\.description is a Python callable"):
            client.set_layer("tool", "transfer", {"description": describe})
    assert store.load_rules() == RuleSet()


def test_the_declared_report_and_the_snapshot_name_the_callable(
    live_server: LiveServer, store: Store
) -> None:
    sent: list[dict[str, Any]] = []
    with Client(live_server.url, live_server.user(AGENT_USER, role="agent")) as backend:
        gate = Gate(backend)
        gate.register_tool("transfer", TRANSFER)
        found = gate.submit(
            ToolCall(name="transfer", args={"amount": 5000, "to": "bob"}, id="c1"),
            Scope(thread_id="t1", agent="bank-bot", requester="ana"),
        )
        assert isinstance(found, Pending)
        sent.append(found.request.rule.snapshot())
    with live_server.client(live_server.user("ana")) as person:  # no approvers named: ana's request
        [declared] = person.get("/v1/rules/declared").json()
        request = person.get(f"/v1/requests/{found.request_id}").json()
    assert declared["rule"]["description"] == f"<python: {__name__}.describe>"
    assert "when" not in declared["rule"]  # a request's rule has no `when`: the gate applied it
    assert sent[0]["description"] == f"<python: {__name__}.describe>"
    assert request["description"] == "Tool execution requires approval: send 5000 to *** (asked by ana)"
