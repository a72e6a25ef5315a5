"""Seed-000 parity in the core (Haystack's documented behaviour)."""

from __future__ import annotations

import json
import re
import threading
from io import StringIO
from typing import Any

import pytest

from signoff import (
    AlwaysAsk,
    Approve,
    AskOnce,
    AskOncePerTool,
    ConfigError,
    Edit,
    Gate,
    NeverAsk,
    Outcome,
    RichConsoleUI,
    RuleSet,
    Scope,
    SimpleConsoleUI,
    ToolCall,
)
from signoff.policies import learn_from
from signoff.store import SQLiteStore, Store

RULES = RuleSet.model_validate({"tools": {"send_email": {"requires_approval": True}}})
EMAIL = {"to": "alice", "body": "hi"}


class AskForExternal:
    """A custom policy as Haystack's guide writes one: `should_ask` only."""

    def should_ask(self, call: ToolCall, scope: Scope, memory: Any) -> bool:
        return not str(call.args.get("to", "")).endswith("@mycompany.com")


def test_learn_from_skips_a_policy_without_after_decision() -> None:
    outcome = Outcome(tool_name="send_email", execute=True, decision="approve")
    learn_from(AskForExternal(), ToolCall(name="send_email", args=EMAIL), Scope(), outcome, memory=None)  # type: ignore[arg-type]


def test_a_policy_without_after_decision_survives_the_decision(sqlite_store: SQLiteStore) -> None:
    gate = Gate(sqlite_store, rules=RULES, policy=AskForExternal())  # type: ignore[arg-type]
    call = ToolCall(name="send_email", args=EMAIL, id="c1")
    pending = gate.submit(call, Scope(thread_id="t1"))
    sqlite_store.decide(pending.request_id, Edit(args=EMAIL), actor="alice")  # type: ignore[union-attr]
    assert gate.review(call, Scope(thread_id="t1")).execute


def test_a_modify_that_changes_nothing_is_an_approval(sqlite_store: SQLiteStore) -> None:
    gate = Gate(sqlite_store, rules=RULES)
    call = ToolCall(name="send_email", args=EMAIL, id="c1")
    pending = gate.submit(call, Scope(thread_id="t1"))
    sqlite_store.decide(pending.request_id, Edit(args=dict(EMAIL)), actor="alice")  # type: ignore[union-attr]
    outcome = gate.review(call, Scope(thread_id="t1"))
    assert (outcome.decision, outcome.feedback, outcome.final_tool_params) == ("approve", None, EMAIL)


def test_the_console_reports_an_unchanged_modify_as_approve(sqlite_store: SQLiteStore) -> None:
    gate = Gate(sqlite_store, rules=RULES)
    pending = gate.submit(ToolCall(name="send_email", args=EMAIL, id="c1"), Scope(thread_id="t1"))
    typed = iter(["m", "", ""])  # modify, then Enter to keep each value
    ui = SimpleConsoleUI(input=lambda _: next(typed), stdout=StringIO())
    decision = ui.get_decision(pending.request, stop=threading.Event())  # type: ignore[union-attr]
    assert decision is not None and decision.type == "approve"


def test_outcome_from_dict_inverts_to_dict() -> None:
    outcome = Outcome(
        tool_name="t", execute=False, decision="reject", feedback="no", is_error=True, request_id="r1"
    )
    assert Outcome.from_dict(outcome.to_dict()) == outcome


SEED_CALL = ToolCall(
    name="send_email",
    args={"to": "alice@example.com", "subject": "Welcome!", "body": "Hi Alice, welcome aboard!"},
    id="c1",
    description="Send an email to a recipient.",
)
SEED_RULES = RuleSet.model_validate(
    {"tools": {"send_email": {"requires_approval": True, "allowed_decisions": ["approve", "reject", "edit"]}}}
)
SEED_PROMPT = """--- Tool Execution Request ---
Tool: send_email
Description: Send an email to a recipient.
Arguments:
  to: alice@example.com
  subject: Welcome!
  body: Hi Alice, welcome aboard!
------------------------------
Confirm execution? (y=confirm / n=reject / m=modify): """


def seed_request(store: SQLiteStore, rules: RuleSet = SEED_RULES) -> Any:
    pending = Gate(store, rules=rules).submit(SEED_CALL, Scope(thread_id="t1"))
    return pending.request  # type: ignore[union-attr]


def test_the_simple_console_shows_the_tools_description_as_the_seed_does(sqlite_store: SQLiteStore) -> None:
    request = seed_request(sqlite_store)
    out = StringIO()
    SimpleConsoleUI(input=lambda _: "y", stdout=out).get_decision(request, stop=threading.Event())
    assert out.getvalue() == (
        f"\nRequest: {request.id} (or decide elsewhere: signoff approve {request.id})\n" + SEED_PROMPT
    )


def test_the_rich_console_shows_the_tools_description(sqlite_store: SQLiteStore) -> None:
    from rich.console import Console

    request = seed_request(sqlite_store)
    console = Console(file=StringIO(), width=120, color_system=None)
    RichConsoleUI(input=lambda _: "y", console=console).get_decision(request, stop=threading.Event())
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert "Description: Send an email to a recipient." in out
    assert "Tool execution requires approval" not in out and "Args:" not in out
    assert "Note:" not in out


def test_a_rules_own_card_text_is_shown_as_a_note_beside_the_tools_description(
    sqlite_store: SQLiteStore,
) -> None:
    rules = RuleSet.model_validate(
        {"tools": {"send_email": {"requires_approval": True, "description": "Mail to {to}, check it"}}}
    )
    request = seed_request(sqlite_store, rules)
    out = StringIO()
    SimpleConsoleUI(input=lambda _: "y", stdout=out).get_decision(request, stop=threading.Event())
    lines = out.getvalue().splitlines()
    assert lines[4:6] == [
        "Description: Send an email to a recipient.",
        "Note: Mail to alice@example.com, check it",
    ]


SAVABLE: list[Any] = [AlwaysAsk(), NeverAsk(), AskOnce(per=("app", "thread_id")), AskOncePerTool()]


@pytest.mark.parametrize("policy", SAVABLE, ids=lambda p: type(p).__name__)
def test_policies_round_trip_through_haystacks_envelope(policy: Any) -> None:
    data = policy.to_dict()
    assert data["type"] == f"signoff.policies.{type(policy).__name__}"
    again = type(policy).from_dict(json.loads(json.dumps(data)))
    assert type(again) is type(policy) and again.to_dict() == data
    assert getattr(again, "per", None) == getattr(policy, "per", None)


def test_askonce_saves_its_scope_fields() -> None:
    assert AskOnce(per=("app", "thread_id")).to_dict() == {
        "type": "signoff.policies.AskOnce",
        "init_parameters": {"per": ["app", "thread_id"]},
    }
    assert AskOnce.from_dict({"type": "signoff.policies.AskOnce", "init_parameters": {}}).per == (
        "app",
        "agent",
        "requester",
    )


def test_console_uis_round_trip_without_their_streams() -> None:
    simple = SimpleConsoleUI(stdout=StringIO())
    assert simple.to_dict() == {"type": "signoff.console.SimpleConsoleUI", "init_parameters": {}}
    assert type(SimpleConsoleUI.from_dict(simple.to_dict())) is SimpleConsoleUI
    rich = RichConsoleUI()
    assert rich.to_dict() == {"type": "signoff.console.RichConsoleUI", "init_parameters": {"console": None}}
    assert type(RichConsoleUI.from_dict(rich.to_dict())) is RichConsoleUI


def test_an_envelope_for_another_class_is_refused() -> None:
    with pytest.raises(
        ConfigError, match=re.escape("cannot load 'signoff.policies.NeverAsk' as signoff.policies.AlwaysAsk")
    ):
        AlwaysAsk.from_dict(NeverAsk().to_dict())
    with pytest.raises(ValueError, match="unknown scope fields"):
        AskOnce.from_dict({"type": "signoff.policies.AskOnce", "init_parameters": {"per": ["tool"]}})


def test_the_envelope_is_haystacks() -> None:
    serialization = pytest.importorskip("haystack.core.serialization")
    for obj in [*SAVABLE, SimpleConsoleUI()]:
        parameters = obj.to_dict()["init_parameters"]
        assert obj.to_dict() == serialization.default_to_dict(obj, **parameters)
        assert type(serialization.default_from_dict(type(obj), obj.to_dict())) is type(obj)


def test_the_store_keeps_an_edit_that_changes_nothing_as_an_approval(store: Store) -> None:
    gate = Gate(store, rules=RULES)
    call = ToolCall(name="send_email", args=EMAIL, id="c1")
    pending = gate.submit(call, Scope(thread_id="t1"))
    request_id = pending.request_id  # type: ignore[union-attr]
    decided = store.decide(request_id, Edit(args=dict(EMAIL), comment="fine as is"), actor="alice")

    assert (decided.status, decided.final_args) == ("approved", EMAIL)
    assert decided.decision is not None and decided.decision.decision == Approve(comment="fine as is")
    stored = store.get_request(request_id)
    assert stored.status == "approved" and stored.decision is not None
    assert stored.decision.decision == Approve(comment="fine as is")
    (entry,) = store.audit_entries(request_id=request_id, action="request.decided")
    assert entry.data == {
        "type": "approve",
        "unchanged_edit": True,
        "original_args": EMAIL,
        "comment": "fine as is",
    }
    outcome = gate.review(call, Scope(thread_id="t1"))
    assert (outcome.decision, outcome.feedback, outcome.final_tool_params) == ("approve", None, EMAIL)


def test_an_edit_that_changes_an_argument_stays_an_edit(sqlite_store: SQLiteStore) -> None:
    pending = Gate(sqlite_store, rules=RULES).submit(
        ToolCall(name="send_email", args=EMAIL, id="c1"), Scope(thread_id="t1")
    )
    request_id = pending.request_id  # type: ignore[union-attr]
    decided = sqlite_store.decide(request_id, Edit(args={**EMAIL, "to": "bob"}), actor="alice")
    assert decided.status == "edited"
    (entry,) = sqlite_store.audit_entries(request_id=request_id, action="request.decided")
    assert entry.data["type"] == "edit" and "unchanged_edit" not in entry.data
