"""Rule changes in the store: each one audit entry with before and after, the rules' history
read back from the log, a revert of one change (refused when a later change touched the same
entries), a change made against a version that moved on, and a preview that stores nothing. On
SQLite and PostgreSQL."""

from __future__ import annotations

import itertools
import threading
from typing import Any

import pytest

from signoff.errors import InvalidInput, NotFound, RulesChanged
from signoff.rules import RuleSet
from signoff.rules.history import LayerChange
from signoff.rules.preview import SampleCall
from signoff.store import Store

SUPPORT = {"interrupt_on": {"send_email": True, "ls": False}}


def rule_entries(store: Store) -> list[tuple[str, dict[str, Any]]]:
    return [(entry.action, entry.data) for entry in store.audit_entries(kind="rules")]


def test_each_change_is_one_entry_with_before_after_and_the_version(store: Store) -> None:
    store.set_layer("tool", "send_email", {"requires_approval": True}, actor="alice")
    store.set_layer("tool", "send_email", {"requires_approval": True, "approvers": ["bob"]}, actor="alice")
    assert store.delete_layer("tool", "send_email", actor="carol")
    rules = RuleSet.from_dict({"agents": {"support": SUPPORT}, "defaults": {"deadline": "1h"}})
    assert store.replace_rules(rules, actor="dave", channel="web") == 4

    entries = rule_entries(store)
    assert [action for action, _ in entries] == ["rules.set", "rules.set", "rules.deleted", "rules.imported"]
    first, second, deleted, imported = (data for _, data in entries)
    assert first == {
        "kind": "tool",
        "name": "send_email",
        "before": None,
        "after": {"requires_approval": True},
        "version": 1,
    }
    assert (second["before"], second["after"]) == (
        {"requires_approval": True},
        {"requires_approval": True, "approvers": ["bob"]},
    )
    assert (deleted["before"], deleted["after"], deleted["version"]) == (second["after"], None, 3)
    assert imported == {
        "before": {},
        "after": {"defaults": {"deadline": "1h"}, "agents": {"support": SUPPORT}},
        "version": 4,
    }
    assert store.rules_version() == 4
    assert store.verify_audit().ok


def test_deleting_nothing_changes_nothing(store: Store) -> None:
    assert store.delete_layer("agent", "nobody", actor="alice") is False
    assert store.rules_version() == 0
    assert rule_entries(store) == []


def test_a_change_against_a_version_that_moved_on_is_refused_and_changes_nothing(store: Store) -> None:
    store.set_layer("tool", "send_email", {"requires_approval": True}, actor="alice")
    seen = store.rules_version()
    store.set_layer("tool", "deploy", {"requires_approval": True}, actor="bob")  # meanwhile
    with pytest.raises(RulesChanged, match=f"since version {seen} .*version {seen + 1} now"):
        store.replace_rules(RuleSet(), actor="alice", if_version=seen)
    with pytest.raises(RulesChanged):
        store.set_layer("tool", "send_email", {"requires_approval": False}, actor="alice", if_version=seen)
    with pytest.raises(RulesChanged):
        store.delete_layer("tool", "deploy", actor="alice", if_version=seen)
    assert store.rules_version() == seen + 1
    assert set(store.load_rules().tools) == {"send_email", "deploy"}
    assert len(rule_entries(store)) == 2
    assert store.replace_rules(RuleSet(), actor="alice", if_version=seen + 1) == seen + 2


def test_the_history_reads_newest_first_a_page_at_a_time(store: Store) -> None:
    for index in range(7):
        store.set_layer("tool", f"tool{index}", {"requires_approval": True}, actor=f"user{index}")
        store.record("something.else", actor="x", channel="cli")  # not a rule change
    first = store.rule_history(limit=3)
    assert [change.actor for change in first] == ["user6", "user5", "user4"]
    second = store.rule_history(before=first[-1].seq, limit=3)
    third = store.rule_history(before=second[-1].seq, limit=3)
    assert [change.actor for change in second + third] == ["user3", "user2", "user1", "user0"]
    assert third[-1].changes == [LayerChange("tool", "tool0", None, {"requires_approval": True})]
    assert third[-1].version == 1
    assert store.rule_history(before=third[-1].seq) == []


def test_a_revert_puts_back_what_one_change_replaced_and_is_a_change_itself(store: Store) -> None:
    store.set_layer("tool", "send_email", {"requires_approval": True, "approvers": ["alice"]}, actor="a")
    store.set_layer("tool", "send_email", {"requires_approval": True, "approvers": ["bob"]}, actor="b")
    store.set_layer("agent", "support", SUPPORT, actor="c")
    [support, to_bob, _] = store.rule_history()

    reverted = store.revert_rule_change(to_bob.seq, actor="root", channel="web")
    assert store.get_layer("tool", "send_email") == {"requires_approval": True, "approvers": ["alice"]}
    assert store.get_layer("agent", "support") == SUPPORT  # untouched: a later change, another entry
    assert (reverted.action, reverted.actor, reverted.channel, reverted.reverted) == (
        "rules.reverted",
        "root",
        "web",
        to_bob.seq,
    )
    assert reverted.changes == [
        LayerChange(
            "tool",
            "send_email",
            {"requires_approval": True, "approvers": ["bob"]},
            {
                "requires_approval": True,
                "approvers": ["alice"],
            },
        )
    ]
    assert store.rule_history(limit=1) == [reverted]

    store.revert_rule_change(reverted.seq, actor="root")  # the revert reverted: bob again
    assert store.get_layer("tool", "send_email") == {"requires_approval": True, "approvers": ["bob"]}
    store.revert_rule_change(support.seq, actor="root")  # an added entry's revert removes it
    assert store.get_layer("agent", "support") is None
    assert store.verify_audit().ok


def test_a_revert_is_refused_when_a_later_change_touched_the_same_entry(store: Store) -> None:
    store.set_layer("tool", "send_email", {"requires_approval": True}, actor="a")
    store.set_layer("tool", "send_email", {"requires_approval": False}, actor="b")
    [later, first] = store.rule_history()
    entries = len(rule_entries(store))
    with pytest.raises(RulesChanged, match="tool send_email changed again after change"):
        store.revert_rule_change(first.seq, actor="root")
    assert store.get_layer("tool", "send_email") == {"requires_approval": False}
    assert len(rule_entries(store)) == entries
    assert store.rules_version() == 2  # the version's bump went with the refusal
    store.revert_rule_change(later.seq, actor="root")
    store.revert_rule_change(first.seq, actor="root")  # now it holds what the first change left
    assert store.get_layer("tool", "send_email") is None


def test_reverting_an_import_puts_back_only_the_entries_it_changed(store: Store) -> None:
    store.set_layer("tool", "send_email", {"requires_approval": True}, actor="a")
    store.set_layer("tool", "deploy", {"requires_approval": True}, actor="a")
    store.replace_rules(
        RuleSet.from_dict(
            {"tools": {"deploy": {"requires_approval": True}, "drop_db": {"requires_approval": True}}}
        ),
        actor="b",
    )  # removes send_email, adds drop_db, leaves deploy
    [imported, *_] = store.rule_history()
    assert {(change.label, change.what) for change in imported.changes or []} == {
        ("tool send_email", "removed"),
        ("tool drop_db", "added"),
    }
    store.set_layer("agent", "support", SUPPORT, actor="c")  # later, elsewhere: does not block
    store.revert_rule_change(imported.seq, actor="root")
    rules = store.load_rules()
    assert set(rules.tools) == {"send_email", "deploy"}
    assert set(rules.agents) == {"support"}
    [revert, *_] = store.rule_history()
    assert revert.action == "rules.reverted" and revert.reverted == imported.seq
    assert {(change.label, change.what) for change in revert.changes or []} == {
        ("tool send_email", "added"),
        ("tool drop_db", "removed"),
    }


def test_what_cannot_be_reverted_says_why(store: Store) -> None:
    legacy_data = {"kind": "tool", "name": "x"}  # as written before signoff kept `before`
    store.record("rules.set", actor="old", channel="cli", data=legacy_data)
    [legacy] = store.rule_history()
    assert legacy.changes is None
    with pytest.raises(InvalidInput, match="recorded before signoff kept what a change replaced"):
        store.revert_rule_change(legacy.seq, actor="root")
    store.set_layer("tool", "x", {"requires_approval": True}, actor="a")
    store.set_layer("tool", "x", {"requires_approval": True}, actor="a")  # the same again
    with pytest.raises(InvalidInput, match="changed nothing"):
        store.revert_rule_change(store.rule_history()[0].seq, actor="root")
    other = store.record("user.added", actor="a", channel="cli", data={"user": "u"})
    for seq in (other.seq, 999):
        with pytest.raises(NotFound, match=f"audit entry {seq} is not a change to the rules"):
            store.revert_rule_change(seq, actor="root")


def test_concurrent_changes_each_record_what_the_one_before_left(store: Store) -> None:
    """The version's bump comes first: changes to one entry take turns, so the history is one
    unbroken chain of before and after."""
    writers = 6
    barrier = threading.Barrier(writers)
    errors: list[BaseException] = []

    def write(index: int) -> None:
        try:
            barrier.wait(10)
            for round_ in range(3):
                store.set_layer("tool", "shared", {"approvers": [f"w{index}-{round_}"]}, actor=f"w{index}")
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(index,)) for index in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    history = list(reversed(store.rule_history(limit=100)))
    assert len(history) == writers * 3
    assert [change.version for change in history] == list(range(1, writers * 3 + 1))
    for earlier, later in itertools.pairwise(history):
        assert (later.changes or [])[0].before == (earlier.changes or [])[0].after
    assert store.get_layer("tool", "shared") == (history[-1].changes or [])[0].after


def test_a_preview_compares_and_explains_and_stores_nothing(store: Store) -> None:
    store.set_layer("tool", "send_email", {"requires_approval": True, "approvers": ["alice"]}, actor="a")
    head = store.audit_head_seq()
    proposed = RuleSet.from_dict(
        {
            "tools": {"send_email": {"requires_approval": True, "approvers": ["alice"], "deadline": "2h"}},
            "agents": {"support-bot": {"interrupt_on": {"send_email": False}}},
        }
    )
    call = SampleCall(tool="send_email", agent="support-bot", app="prod")
    preview = store.preview_rules(proposed, call)
    assert preview.version == 1
    assert [(change.label, change.what) for change in preview.changes] == [
        ("tool send_email", "changed"),
        ("agent support-bot", "added"),
    ]
    assert "+    deadline: 2h" in preview.diff.splitlines()
    assert preview.sample is not None and preview.sample.differs
    assert preview.sample.in_force["sentence"] == (
        "`send_email` by `support-bot` in `prod` would ask alice (approve, edit, reject, respond), "
        "1d, then reject."
    )
    assert preview.sample.proposed["sentence"] == (
        "`send_email` by `support-bot` in `prod` would run without asking (agent says so)."
    )
    assert store.audit_head_seq() == head and store.rules_version() == 1
    same = store.preview_rules(store.load_rules())
    assert (same.changes, same.diff, same.sample) == ([], "", None)
