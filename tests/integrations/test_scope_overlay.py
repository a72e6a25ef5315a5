"""The scope an adapter reads from its framework's run context: the defaults overlaid."""

from __future__ import annotations

import pytest

from signoff import Scope
from signoff.integrations._scope import ScopeDefaults, overlaid, overlay_scope, rule_fields

DEFAULTS = ScopeDefaults(agent="mailer", app="prod", requester="alice")


def test_a_dict_overlays_its_values_but_not_its_nones() -> None:
    merged = overlaid({"thread_id": "t1", "requester": "bob", "app": None}, DEFAULTS, where="ctx")
    assert merged == {
        "thread_id": "t1",
        "agent": "mailer",
        "app": "prod",
        "requester": "bob",
        "unattended": False,
    }
    assert DEFAULTS.to_dict()["requester"] == "alice"  # the defaults are not changed


def test_a_scope_overlays_every_field_its_nones_too() -> None:
    merged = overlaid(Scope(thread_id="t2", agent="other"), DEFAULTS, where="ctx")
    assert merged == {
        "thread_id": "t2",
        "agent": "other",
        "app": None,
        "requester": None,
        "unattended": False,
        "client": None,
    }


def test_unknown_keys_and_other_types_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"ctx has unknown keys \['agnet'\]"):
        overlaid({"agnet": "x"}, DEFAULTS, where="ctx")
    with pytest.raises(TypeError, match=r"ctx must be a signoff\.Scope or a dict, got list"):
        overlaid(["t"], DEFAULTS, where="ctx")


def test_a_scope_without_a_thread_gets_one_of_its_own_unless_one_is_required() -> None:
    made = overlay_scope(None, DEFAULTS, where="ctx", thread_prefix="fw-")
    assert made.thread_id.startswith("fw-") and made.agent == "mailer"
    with pytest.raises(ValueError, match="needs a thread"):
        overlay_scope({}, DEFAULTS, where="ctx", thread_prefix="fw-", thread_required="needs a thread")


@pytest.mark.parametrize(
    "given",
    [
        None,
        {"thread_id": "t1"},
        {"thread_id": "t1", "requester": "bob", "app": None},
        {"agent": "", "app": "staging"},
        Scope(thread_id="t2", agent="other"),
    ],
    ids=["none", "thread-only", "nones-kept-out", "empty-string-overrides", "scope"],
)
def test_rule_fields_are_the_overlaid_scopes_fields(given: object) -> None:
    merged = overlaid(given, DEFAULTS, where="ctx")
    assert rule_fields(given, DEFAULTS, where="ctx") == (merged["agent"], merged["app"], merged["requester"])


def test_rule_fields_refuse_what_overlaid_refuses() -> None:
    with pytest.raises(ValueError, match=r"ctx has unknown keys \['agnet'\]"):
        rule_fields({"agnet": "x"}, DEFAULTS, where="ctx")
    with pytest.raises(TypeError, match="got list"):
        rule_fields(["t"], DEFAULTS, where="ctx")
