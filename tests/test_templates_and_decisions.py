"""Card descriptions, the texts the model is told (Haystack's defaults), and parsing decisions."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from signoff import (
    Approve,
    Edit,
    Gate,
    InvalidDecision,
    Pending,
    Reject,
    Request,
    Respond,
    RuleSet,
    Scope,
    Store,
    ToolCall,
    parse_decision,
)
from signoff._util import utcnow
from signoff.decisions import decision_to_dict
from signoff.outcome import outcome_for
from signoff.requests import NewRequest
from signoff.rules import Resolver
from signoff.rules.model import RequestRule
from signoff.templates import fill, modification_text, redact_args, rejection_text, render_description

HAYSTACK_REJECT = "Tool execution for '{tool_name}' was rejected by the user."
HAYSTACK_MODIFY = "The parameters for tool '{tool_name}' were updated by the user to:\n{final_tool_params}"
HAYSTACK_FEEDBACK = "With user feedback: {feedback}"

ARGS: dict[str, Any] = {"command": "rm -rf /tmp/x", "retries": 3, "env": {"DEBUG": True}, "tags": ["a", "b"]}


def describe(template: str, args: dict[str, Any] | None = None, **kw: Any) -> str:
    return render_description(template, tool_name="shell", args=ARGS if args is None else args, **kw)


# -- descriptions -------------------------------------------------------------------------------


def test_tool_name_and_tool_args_as_json() -> None:
    text = describe("{tool_name}: {tool_args}")
    name, _, args = text.partition(": ")
    assert name == "shell"
    assert json.loads(args) == ARGS


def test_per_argument_placeholders() -> None:
    assert describe("AI 想执行 shell：{command}") == "AI 想执行 shell：rm -rf /tmp/x"
    # non-strings are inserted as JSON
    assert describe("{retries} tries, env {env}, tags {tags}") == (
        '3 tries, env {"DEBUG": true}, tags ["a", "b"]'
    )


def test_seed_example_template() -> None:
    text = render_description("AI 想清空数据库 {target}", tool_name="delete_db", args={"target": "users"})
    assert text == "AI 想清空数据库 users"


def test_unknown_placeholders_are_left_as_written() -> None:
    assert describe("run {command} on {host} as {user}") == "run rm -rf /tmp/x on {host} as {user}"


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        pytest.param("{", "{", id="lone-open"),
        pytest.param("}", "}", id="lone-close"),
        pytest.param("}{", "}{", id="reversed"),
        pytest.param("{}", "{}", id="empty"),
        pytest.param("{0} {1}", "{0} {1}", id="positional"),
        pytest.param("{command", "{command", id="unclosed"),
        pytest.param("{ command }", "{ command }", id="spaces"),
        pytest.param("{command!r} {retries:>5}", "{command!r} {retries:>5}", id="format-spec"),
        pytest.param("%s %(command)s", "%s %(command)s", id="percent-style"),
        pytest.param('{"json": {retries}}', '{"json": 3}', id="braces-around-placeholder"),
        pytest.param("{{tool_name}}", "{shell}", id="doubled"),
    ],
)
def test_odd_braces_never_crash(template: str, expected: str) -> None:
    assert describe(template) == expected


def test_placeholders_are_replaced_once_not_recursively() -> None:
    args = {"a": "{b}", "b": "secret"}
    assert render_description("{a}", tool_name="t", args=args) == "{b}"


def test_tool_name_and_args_placeholders_cannot_be_spoofed_by_arguments() -> None:
    args = {"tool_name": "harmless", "tool_args": "{}", "target": "prod"}
    assert render_description("{tool_name} {target}", tool_name="delete_db", args=args) == "delete_db prod"


def test_default_description() -> None:
    rules = RuleSet.from_dict({"tools": {"shell": {"requires_approval": True}}})
    found = Resolver(rules).explain("shell").rule
    text = render_description(
        found.description, tool_name="shell", args={"command": "ls"}, prefix=found.description_prefix
    )
    assert text == 'Tool execution requires approval\n\nTool: shell\nArgs: {"command": "ls"}'


def test_redaction_masks_description_but_not_the_value() -> None:
    args = {"user": "bob", "password": "hunter2", "token": 12345}
    text = render_description(
        "{user} {password} {token} {tool_args}", tool_name="login", args=args, redact=("password", "token")
    )
    assert "hunter2" not in text
    assert "12345" not in text
    assert text.startswith("bob *** *** ")
    assert json.loads(text.split(" ", 3)[3]) == {"user": "bob", "password": "***", "token": "***"}
    assert args == {"user": "bob", "password": "hunter2", "token": 12345}  # not mutated
    assert redact_args(args, ()) == args


def test_redaction_on_stored_requests(sqlite_store: Store) -> None:
    rules = RuleSet.from_dict({"tools": {"login": {"requires_approval": True, "redact": ["password"]}}})
    gate = Gate(sqlite_store, rules=rules)
    pending = gate.submit(
        ToolCall(name="login", args={"user": "bob", "password": "hunter2"}, id="c1"), Scope(thread_id="t")
    )
    assert isinstance(pending, Pending)
    request = sqlite_store.get_request(pending.request_id)
    assert request.args == {"user": "bob", "password": "hunter2"}  # execution gets the real value
    assert request.shown_args() == {"user": "bob", "password": "***"}
    assert "hunter2" not in request.description
    assert '"password": "***"' in request.description
    created = list(sqlite_store.audit_entries(request_id=request.id, action="request.created"))
    assert created
    assert "hunter2" not in json.dumps(created[0].data)
    # approving runs with the real value
    sqlite_store.decide(request.id, Approve(), actor="alice")
    outcome = gate.review(
        ToolCall(name="login", args={"user": "bob", "password": "hunter2"}, id="c1"), Scope(thread_id="t")
    )
    assert outcome.final_tool_params == {"user": "bob", "password": "hunter2"}


def test_custom_description_template_per_rule(sqlite_store: Store) -> None:
    rules = RuleSet.from_yaml(
        """
        tools:
          delete_db: {requires_approval: true, description: "AI 想清空数据库 {target} ({tool_name}, {nope})"}
        """
    )
    pending = Gate(sqlite_store, rules=rules).submit(
        ToolCall(name="delete_db", args={"target": "users"}, id="c1"), Scope(thread_id="t")
    )
    assert isinstance(pending, Pending)
    assert pending.request.description == "AI 想清空数据库 users (delete_db, {nope})"


# -- texts for the model ----------------------------------------------------------------------


def test_haystack_default_texts() -> None:
    assert rejection_text(HAYSTACK_REJECT, HAYSTACK_FEEDBACK, tool_name="delete_db", feedback=None) == (
        "Tool execution for 'delete_db' was rejected by the user."
    )
    assert rejection_text(
        HAYSTACK_REJECT, HAYSTACK_FEEDBACK, tool_name="delete_db", feedback="too risky"
    ) == ("Tool execution for 'delete_db' was rejected by the user. With user feedback: too risky")
    assert modification_text(
        HAYSTACK_MODIFY,
        HAYSTACK_FEEDBACK,
        tool_name="send_email",
        final_args={"to": "bob", "n": 2},
        feedback=None,
    ) == ("The parameters for tool 'send_email' were updated by the user to:\n" + '{"to": "bob", "n": 2}')
    assert modification_text(
        HAYSTACK_MODIFY, HAYSTACK_FEEDBACK, tool_name="send_email", final_args={}, feedback="use bob"
    ) == ("The parameters for tool 'send_email' were updated by the user to:\n{} With user feedback: use bob")


def test_request_rule_defaults_are_haystacks() -> None:
    rule = RequestRule()
    assert rule.reject_template == HAYSTACK_REJECT
    assert rule.modify_template == HAYSTACK_MODIFY
    assert rule.feedback_template == HAYSTACK_FEEDBACK


def decided(
    store: Store, decision: Any, *, rules: RuleSet | None = None, args: dict[str, Any] | None = None
) -> Request:
    gate = Gate(store, rules=rules or RuleSet.from_dict({"tools": {"*": {"requires_approval": True}}}))
    pending = gate.submit(
        ToolCall(name="send_email", args=args or {"to": "alice@example.com", "subject": "Hi"}, id="c1"),
        Scope(thread_id="t"),
    )
    assert isinstance(pending, Pending)
    return store.decide(pending.request_id, decision, actor="alice", channel="test")


def test_outcome_reject_texts(sqlite_store: Store) -> None:
    outcome = outcome_for(decided(sqlite_store, Reject(message="not to alice")))
    assert outcome.execute is False
    assert outcome.is_error is True
    assert outcome.decision == "reject"
    assert outcome.tool_result == (
        "Tool execution for 'send_email' was rejected by the user. With user feedback: not to alice"
    )
    assert outcome.feedback == outcome.tool_result
    assert outcome.model_text == outcome.tool_result
    assert outcome.tool_execution_decision() == {
        "tool_name": "send_email",
        "execute": False,
        "tool_call_id": "c1",
        "feedback": outcome.tool_result,
        "final_tool_params": None,
    }


def test_outcome_reject_without_reason(sqlite_store: Store) -> None:
    outcome = outcome_for(decided(sqlite_store, Reject()))
    assert outcome.tool_result == "Tool execution for 'send_email' was rejected by the user."


def test_outcome_edit_texts(sqlite_store: Store) -> None:
    outcome = outcome_for(decided(sqlite_store, Edit(args={"to": "bob@example.com", "subject": "Hi"})))
    assert outcome.execute is True
    assert outcome.decision == "edit"
    assert outcome.final_tool_params == {"to": "bob@example.com", "subject": "Hi"}
    assert outcome.feedback == (
        "The parameters for tool 'send_email' were updated by the user to:\n"
        '{"to": "bob@example.com", "subject": "Hi"}'
    )
    assert outcome.model_text is None


def test_outcome_edit_with_comment(sqlite_store: Store) -> None:
    outcome = outcome_for(decided(sqlite_store, Edit(args={"to": "bob"}, comment="bob, not alice")))
    assert outcome.feedback == (
        "The parameters for tool 'send_email' were updated by the user to:\n"
        '{"to": "bob"} With user feedback: bob, not alice'
    )


def test_outcome_approve(sqlite_store: Store) -> None:
    approved = outcome_for(decided(sqlite_store, Approve(comment="fine")))
    assert (approved.execute, approved.decision, approved.feedback) == (True, "approve", None)
    assert approved.final_tool_params == {"to": "alice@example.com", "subject": "Hi"}
    assert approved.actor == "alice"


def test_outcome_respond(store: Store) -> None:
    outcome = outcome_for(decided(store, Respond(value={"sent": False, "reason": "holiday"})))
    assert outcome.execute is False
    assert outcome.is_error is False
    assert outcome.tool_result == {"sent": False, "reason": "holiday"}
    assert json.loads(outcome.model_text or "") == {"sent": False, "reason": "holiday"}


def test_custom_templates_per_rule(store: Store) -> None:
    rules = RuleSet.from_yaml(
        """
        defaults:
          feedback_template: "Reason: {feedback}"
        tools:
          send_email:
            requires_approval: true
            reject_template: "Skipping '{tool_name}' — rejected by operator."
            modify_template: "Updated parameters for '{tool_name}': {final_tool_params} {unknown}"
        """
    )
    rejected = outcome_for(decided(store, Reject(message="spam"), rules=rules))
    assert rejected.tool_result == "Skipping 'send_email' — rejected by operator. Reason: spam"


def test_custom_modify_template_per_rule(sqlite_store: Store) -> None:
    rules = RuleSet.from_yaml(
        """
        tools:
          send_email:
            requires_approval: true
            modify_template: "Updated parameters for '{tool_name}': {final_tool_params} {unknown}"
            feedback_template: "Reason: {feedback}"
        """
    )
    edited = outcome_for(decided(sqlite_store, Edit(args={"to": "bob"}, comment="typo"), rules=rules))
    assert edited.feedback == 'Updated parameters for \'send_email\': {"to": "bob"} {unknown} Reason: typo'


def test_templates_are_kept_with_the_request_when_rules_change(sqlite_store: Store) -> None:
    """A request keeps the texts of the rule it was made under."""
    gate = Gate(sqlite_store, rules_refresh=0)
    sqlite_store.set_layer(
        "tool", "send_email", {"requires_approval": True, "reject_template": "Old: {tool_name}"}, actor="ops"
    )
    pending = gate.submit(ToolCall(name="send_email", args={}, id="c1"), Scope(thread_id="t"))
    assert isinstance(pending, Pending)
    sqlite_store.set_layer(
        "tool", "send_email", {"requires_approval": True, "reject_template": "New: {tool_name}"}, actor="ops"
    )
    request = sqlite_store.decide(pending.request_id, Reject(), actor="alice")
    assert outcome_for(request).tool_result == "Old: send_email"


def test_fill_inserts_non_strings_as_json() -> None:
    assert fill("{a} {b} {c}", {"a": None, "b": 1.5, "c": "x"}) == "null 1.5 x"


def test_expired_request_text(sqlite_store: Store) -> None:
    request, _ = sqlite_store.create_request(
        NewRequest(
            thread_id="t",
            tool_call_id="c1",
            tool_name="send_email",
            args={},
            description="d",
            deadline=utcnow() - timedelta(seconds=1),
            rule=RequestRule(expire_message="Nobody answered."),
        )
    )
    expired = sqlite_store.expire(request.id)
    assert expired is not None
    outcome = outcome_for(expired)
    assert (outcome.execute, outcome.is_error, outcome.tool_result) == (False, True, "Nobody answered.")


# -- parse_decision -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param({"type": "approve"}, Approve(), id="approve"),
        pytest.param({"type": "approve", "comment": "ok"}, Approve(comment="ok"), id="approve-comment"),
        pytest.param({"type": "reject"}, Reject(), id="reject"),
        pytest.param({"type": "reject", "message": "no"}, Reject(message="no"), id="reject-message"),
        pytest.param({"type": "edit", "args": {"to": "bob"}}, Edit(args={"to": "bob"}), id="edit"),
        pytest.param({"type": "edit", "args": {}}, Edit(args={}), id="edit-empty-args"),
        pytest.param(
            {"type": "edit", "args": {"to": "bob"}, "comment": "typo"},
            Edit(args={"to": "bob"}, comment="typo"),
            id="edit-comment",
        ),
        pytest.param(
            {"type": "edit", "edited_action": {"name": "send_email", "args": {"to": "bob"}}},
            Edit(args={"to": "bob"}),
            id="langchain-edited-action",
        ),
        pytest.param(
            {"type": "edit", "edited_action": {"args": {"to": "bob"}}},
            Edit(args={"to": "bob"}),
            id="edited-action-without-name",
        ),
        pytest.param({"type": "respond", "message": "42"}, Respond(message="42"), id="respond-message"),
        pytest.param({"type": "respond", "value": {"n": 1}}, Respond(value={"n": 1}), id="respond-value"),
        pytest.param({"type": "respond", "value": 0}, Respond(value=0), id="respond-falsy-value"),
    ],
)
def test_parse_good_decisions(data: dict[str, Any], expected: Any) -> None:
    decision = parse_decision(data, tool_name="send_email")
    assert decision == expected
    assert parse_decision(decision_to_dict(decision)) == decision


def test_parse_does_not_change_its_input() -> None:
    data = {"type": "edit", "edited_action": {"name": "send_email", "args": {"to": "bob"}}}
    parse_decision(data, tool_name="send_email")
    assert data == {"type": "edit", "edited_action": {"name": "send_email", "args": {"to": "bob"}}}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param([{"type": "approve"}], "a decision must be a JSON object, got list", id="list"),
        pytest.param("approve", "a decision must be a JSON object, got str", id="string"),
        pytest.param(None, "a decision must be a JSON object, got NoneType", id="none"),
        pytest.param(
            {}, "decision type must be one of approve, edit, reject, respond; got None", id="no-type"
        ),
        pytest.param(
            {"type": "confirm"},
            "decision type must be one of approve, edit, reject, respond; got 'confirm'",
            id="wrong-type",
        ),
        pytest.param({"type": 1}, "got 1", id="non-string-type"),
        pytest.param({"type": "edit"}, "invalid edit decision: args: Field required", id="edit-without-args"),
        pytest.param({"type": "edit", "args": None}, "invalid edit decision: args", id="edit-args-null"),
        pytest.param(
            {"type": "edit", "args": ["to", "bob"]}, "invalid edit decision: args", id="edit-args-not-object"
        ),
        pytest.param(
            {"type": "edit", "args": "to=bob"}, "invalid edit decision: args", id="edit-args-string"
        ),
        pytest.param(
            {"type": "edit", "edited_action": {"name": "delete_db", "args": {}}},
            "an edit cannot change the tool (from 'send_email' to 'delete_db')",
            id="edit-changes-tool",
        ),
        pytest.param(
            {"type": "edit", "edited_action": "send_email"},
            "edited_action must be an object with 'name' and 'args'",
            id="edited-action-not-object",
        ),
        pytest.param(
            {"type": "edit", "edited_action": {"name": "send_email"}},
            "invalid edit decision: args",
            id="edited-action-without-args",
        ),
        pytest.param({"type": "respond"}, "respond needs a message or a value", id="respond-empty"),
        pytest.param(
            {"type": "respond", "message": None, "value": None},
            "respond needs a message or a value",
            id="respond-nulls",
        ),
        pytest.param(
            {"type": "reject", "message": 5},
            "invalid reject decision: message",
            id="reject-message-not-string",
        ),
        pytest.param(
            {"type": "approve", "comment": ["x"]},
            "invalid approve decision: comment",
            id="approve-bad-comment",
        ),
        pytest.param(
            {"type": "reject", "mesage": "typo"},
            "invalid reject decision: mesage: Unexpected keyword argument",
            id="unknown-field",
        ),
        pytest.param(
            {"type": "respond", "message": ""}, "respond needs a message or a value", id="respond-blank"
        ),
        pytest.param(
            {
                "type": "edit",
                "args": {"to": "a"},
                "edited_action": {"name": "send_email", "args": {"to": "b"}},
            },
            "an edit gives its args once",
            id="edit-args-twice",
        ),
    ],
)
def test_parse_bad_decisions(data: Any, message: str) -> None:
    with pytest.raises(InvalidDecision) as caught:
        parse_decision(data, tool_name="send_email")
    assert message in caught.value.message
    assert caught.value.status_code == 422


def test_edit_changing_the_tool_is_refused_only_when_the_tool_is_known() -> None:
    data = {"type": "edit", "edited_action": {"name": "delete_db", "args": {"x": 1}}}
    with pytest.raises(InvalidDecision):
        parse_decision(data, tool_name="send_email")
    assert parse_decision(data) == Edit(args={"x": 1})


def test_respond_needs_a_message_or_a_value_in_python_too() -> None:
    with pytest.raises(ValueError, match="respond needs a message or a value"):
        Respond()
    assert Respond(value=False).answer is False
    assert Respond(message="hi").answer == "hi"
