"""`Gate.asks_nowhere`'s kept answers (`signoff.fresh_answers`): kept only while something will
forget them in time (the shared deadline thread, a change of the rules), never for rules read
afresh on every call, and forgotten in a forked child, whose parent's thread did not come along."""

from __future__ import annotations

import os
import sys
import time

import pytest

from signoff import Gate, RuleSet, Store, ToolEntry, gate_rules
from signoff import fresh_answers as fresh

RULES = RuleSet.from_dict({"tools": {"send_email": {"requires_approval": True}}})


def test_stored_rules_keep_answers_until_their_refresh_falls_due(sqlite_store: Store) -> None:
    gate = Gate(sqlite_store, rules_refresh=0.2)
    answers = gate._gate_rules.answers
    assert gate.asks_nowhere("search") is True and gate.asks_nowhere("send_email") is True
    assert answers == {"search": True, "send_email": True}, "kept: the next calls are one lookup"
    deadline = time.monotonic() + 2.0
    while answers:
        assert time.monotonic() < deadline, "the deadline thread did not forget them"
        time.sleep(0.01)
    assert answers.keeping is False, "nothing is kept again before the next refresh"
    assert gate.asks_nowhere("search") is True and "search" in answers


def test_rules_read_afresh_on_every_call_keep_nothing(sqlite_store: Store) -> None:
    gate = Gate(sqlite_store, rules_refresh=0.0)
    assert gate.asks_nowhere("send_email") is True
    sqlite_store.set_layer("tool", "send_email", {"requires_approval": True}, actor="admin")
    assert gate.asks_nowhere("send_email") is False, "seen at the very next call"
    assert gate._gate_rules.answers == {}


def test_fixed_rules_keep_answers_until_a_tool_is_declared_in_code(sqlite_store: Store) -> None:
    gate = Gate(sqlite_store, rules=RULES)
    answers = gate._gate_rules.answers
    assert gate.asks_nowhere("send_email") is False and gate.asks_nowhere("transfer") is True
    assert answers == {"send_email": False, "transfer": True}
    gate.register_tool("transfer", ToolEntry(requires_approval=True))
    assert answers == {}
    assert gate.asks_nowhere("transfer") is False and answers == {"transfer": False}


def test_an_earlier_deadline_does_not_forget_answers_kept_since() -> None:
    answers = fresh.Answers(lambda tool: True)
    old = answers.forget(keep_after=True)
    new = answers.forget(keep_after=True)
    answers.keep("search", True, still=lambda: True)
    answers.forget_if(old)
    assert answers == {"search": True} and answers.keeping
    answers.forget_if(new)
    assert answers == {} and not answers.keeping
    answers.keep("search", True, still=lambda: True)
    assert answers == {}, "not kept: nothing would forget it in time"


def test_without_a_thread_to_forget_them_answers_are_not_kept(
    sqlite_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gate_rules, "call_at", lambda deadline, answers, token: False)
    refresh = 0.2
    gate = Gate(sqlite_store, rules_refresh=refresh)
    assert gate.asks_nowhere("send_email") is True
    assert gate._gate_rules.answers == {}
    changed_at = time.monotonic()
    sqlite_store.set_layer("tool", "send_email", {"requires_approval": True}, actor="admin")
    while gate.asks_nowhere("send_email"):  # read through the resolver, refreshed by the clock
        assert time.monotonic() - changed_at < refresh + 0.5
        time.sleep(0.01)


def test_a_thread_that_cannot_start_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: object) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(fresh.threading.Thread, "start", refuse)
    deadlines = fresh._Deadlines()
    assert deadlines.call_at(time.monotonic() + 1, fresh.Answers(lambda tool: True), 1) is False
    assert deadlines._due == []


@pytest.mark.skipif(sys.platform == "win32" or not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_forgets_answers_its_parents_thread_would_have_forgotten(sqlite_store: Store) -> None:
    stored = Gate(sqlite_store, rules_refresh=60.0)
    fixed = Gate(sqlite_store, rules=RULES)
    assert stored.asks_nowhere("search") is True and fixed.asks_nowhere("search") is True
    assert "search" in stored._gate_rules.answers and "search" in fixed._gate_rules.answers
    parents_deadlines = fresh._deadlines
    pid = os.fork()
    if pid == 0:  # the child: report by exit code, touch no store
        ok = (
            stored._gate_rules.answers == {}
            and not stored._gate_rules.answers.keeping
            and fixed._gate_rules.answers == {"search": True}
            and fresh._deadlines is not parents_deadlines
        )
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert stored._gate_rules.answers == {"search": True}, "the parent keeps its own"


def test_an_effect_mirroring_an_answer_goes_with_it() -> None:
    answers = fresh.Answers(lambda tool: True, timeless=True)
    shown: dict[str, bool] = {}
    apply, undo = (lambda: shown.update(search=False)), (lambda: shown.pop("search"))
    assert not answers.mirror("search", True, apply, undo), "no answer kept: nothing applied"
    answers.keep("search", True, still=lambda: True)
    assert not answers.mirror("search", False, apply, undo), "another answer kept: nothing applied"
    assert answers.mirror("search", True, apply, undo) and shown == {"search": False}
    answers.forget(keep_after=True)
    assert shown == {}, "forgetting the answer undid its effect"
    answers.keep("search", True, still=lambda: True)
    assert answers.mirror("search", True, apply, undo)
    answers.forget_if(answers.token)
    assert shown == {}
    answers.forget_if(answers.token - 1)  # a stale deadline: nothing to undo twice
