"""`trusted_request` and `changed_request`: the store's requests, made without the frozen
dataclass's `__init__`, are the requests `Request(...)` and `dataclasses.replace` make."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from signoff.requests import Request, RequestStatus, changed_request, trusted_request
from signoff.rules.effective import RequestRule

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


def values() -> dict[str, Any]:
    return {
        "id": "req_1",
        "thread_id": "t",
        "tool_call_id": "c",
        "kind": "tool",
        "tool_name": "send_email",
        "tool_description": None,
        "args": {"to": "bob@example.com"},
        "args_schema": None,
        "answer_schema": None,
        "agent": None,
        "app": None,
        "requester": "alice",
        "status": RequestStatus.PENDING,
        "description": "Send an email",
        "rule": RequestRule(approvers=("alice",)),
        "created_at": NOW,
        "updated_at": NOW,
        "deadline": NOW + timedelta(hours=1),
        "created_by": "local",
    }


def test_a_trusted_request_is_the_request_its_constructor_makes() -> None:
    made = trusted_request(**values())
    expected = Request(**values())
    assert made == expected
    assert repr(made) == repr(expected)
    assert made.approvals == () and made.decision is None  # the defaults are there
    with pytest.raises(AttributeError):
        made.status = RequestStatus.APPROVED  # type: ignore[misc]  # still frozen


def test_a_changed_request_is_what_replace_makes_and_leaves_the_original() -> None:
    original = trusted_request(**values())
    changes = {"status": RequestStatus.APPROVED, "decided_at": NOW, "final_args": {"to": "x"}}
    changed = changed_request(original, **changes)
    assert changed == replace(original, **changes)  # type: ignore[arg-type]
    assert original.status is RequestStatus.PENDING and original.final_args is None


def test_unknown_or_missing_fields_are_refused() -> None:
    with pytest.raises(TypeError, match="unknown: \\['colour'\\]"):
        trusted_request(**values(), colour="red")
    partial = values()
    del partial["deadline"]
    with pytest.raises(TypeError, match="missing: \\['deadline'\\]"):
        trusted_request(**partial)
    with pytest.raises(TypeError, match="unknown: \\['colour'\\]"):
        changed_request(trusted_request(**values()), colour="red")
