"""What an edit changed (`signoff.changes`): one diff, used by the outcome, the audit log, the
inbox and the request page."""

from __future__ import annotations

from typing import Any

import pytest

from signoff import Backend, Edit, Gate, RuleSet, Store
from signoff.changes import changes, changes_data, changes_from_data, redacted
from tests.helpers import person_deciding


def as_dicts(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    return [change.to_dict() for change in changes(before, after)]


def test_only_what_differs_field_by_field_in_the_original_order() -> None:
    before = {"to": "alice@example.com", "subject": "Hi", "cc": ["x"], "draft": True}
    after = {"subject": "Hi", "to": "bob@example.com", "draft": False, "bcc": "audit@example.com"}
    assert as_dicts(before, after) == [
        {"field": "to", "change": "changed", "before": "alice@example.com", "after": "bob@example.com"},
        {"field": "cc", "change": "removed", "before": ["x"]},
        {"field": "draft", "change": "changed", "before": True, "after": False},
        {"field": "bcc", "change": "added", "after": "audit@example.com"},
    ]
    assert changes(before, dict(before)) == []


def test_nested_objects_are_compared_key_by_key() -> None:
    before = {"options": {"retries": 3, "notify": {"email": "a@x"}}, "n": 1}
    after = {"options": {"retries": 3, "notify": {"email": "b@x"}}, "n": 1.0}
    assert as_dicts(before, after) == [
        {"field": "options.notify.email", "change": "changed", "before": "a@x", "after": "b@x"}
    ]
    assert as_dicts({"flag": 1}, {"flag": True}) == [
        {"field": "flag", "change": "changed", "before": 1, "after": True}
    ]


def test_redacted_args_show_that_they_changed_not_their_values() -> None:
    found = redacted(changes({"key": "old", "url": "a"}, {"key": "new", "url": "b"}), ["key"])
    assert [change.to_dict() for change in found] == [
        {"field": "key", "change": "changed", "before": "***", "after": "***"},
        {"field": "url", "change": "changed", "before": "a", "after": "b"},
    ]
    data = changes_data({"key": "old"}, {"key": "new", "extra": 1}, ("key",))
    assert [change.to_dict() for change in changes_from_data(data)] == data


RULES = RuleSet.from_yaml("tools: {send_email: {requires_approval: true}}")


@pytest.fixture
def gate(backend: Backend) -> Gate:
    return Gate(backend, rules=RULES)


def test_the_outcome_and_the_audit_log_carry_the_changes(gate: Gate, store: Store) -> None:
    @gate.guard
    def send_email(to: str, subject: str, body: str) -> str:
        return f"Email sent to {to}."

    edit = Edit(args={"to": "bob@example.com", "subject": "Hello", "body": "Hi Bob"})
    with gate.scope(thread_id="t-edit"), person_deciding(store, edit):
        reply = send_email(to="alice@example.com", subject="Hello", body="Hi Alice")  # type: ignore[operator]
    assert reply.outcome.changes == [
        {"field": "to", "change": "changed", "before": "alice@example.com", "after": "bob@example.com"},
        {"field": "body", "change": "changed", "before": "Hi Alice", "after": "Hi Bob"},
    ]
    assert reply.content.startswith("The parameters for tool 'send_email' were updated by the user to:\n{")
    [decided] = [
        entry
        for entry in store.audit_entries(request_id=reply.outcome.request_id)
        if entry.action == "request.decided"
    ]
    assert decided.data["changes"] == reply.outcome.changes
