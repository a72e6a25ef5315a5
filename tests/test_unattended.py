"""Unattended runs (cron): auto-decisions, audited, capped per run."""

from __future__ import annotations

import pytest

from signoff import (
    ApprovalRequiredUnattended,
    AutoResumeExceeded,
    Backend,
    Gate,
    RequestStatus,
    RuleSet,
    Scope,
    Store,
    ToolCall,
)

RULES = RuleSet.from_yaml(
    """
tools:
  nightly_cleanup: {requires_approval: true}
  purge: {requires_approval: true, unattended: reject}
  wire_money: {requires_approval: true, unattended: fail}
"""
)
CRON = Scope(thread_id="cron-1", agent="janitor", unattended=True)


def test_auto_approve_runs_the_tool_and_is_audited(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RULES)
    ran: list[int] = []
    reply = gate.run(
        ToolCall(name="nightly_cleanup", args={"days": 30}), lambda days: ran.append(days) or "ok", CRON
    )
    assert ran == [30]
    assert reply.content == "ok"
    [request] = store.list_requests(thread_id="cron-1")
    assert request.status == "approved"
    assert request.decision is not None
    assert (request.decision.actor, request.decision.channel) == ("unattended", "unattended")
    decided = [e for e in store.audit_entries(request_id=request.id) if e.action == "request.decided"]
    assert [(e.actor, e.data["comment"]) for e in decided] == [("unattended", "auto-approved: unattended")]


def test_unattended_reject_mode(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RULES)
    reply = gate.run(ToolCall(name="purge", args={}), lambda: "should not run", CRON)
    assert reply.is_error
    assert reply.content == (
        "Tool execution for 'purge' was rejected automatically: this run is unattended, "
        "so nobody could be asked, and the rule rejects such calls."
    )
    assert "by the user" not in reply.content


def test_unattended_fail_mode(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RULES)
    with pytest.raises(
        ApprovalRequiredUnattended, match="'wire_money' needs approval and this run is unattended"
    ):
        gate.review(ToolCall(name="wire_money", args={}), CRON)
    assert store.list_requests(thread_id="cron-1") == []


def test_the_cap_fails_the_run_with_its_text(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RULES, max_auto_resume=3)
    for n in range(3):
        assert gate.review(ToolCall(name="nightly_cleanup", args={"n": n}), CRON).execute
    with pytest.raises(AutoResumeExceeded, match=r"^HITL auto-resume exceeded 3 attempts$"):
        gate.review(ToolCall(name="nightly_cleanup", args={"n": 3}), CRON)
    # replays of calls already decided don't count again
    assert gate.review(ToolCall(name="nightly_cleanup", args={"n": 0}), CRON).execute
    # another run has its own budget
    assert gate.review(
        ToolCall(name="nightly_cleanup", args={"n": 0}), Scope(thread_id="cron-2", unattended=True)
    ).execute


def test_the_cap_comes_from_the_environment(
    backend: Backend, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIGNOFF_UNATTENDED_MAX_AUTO_RESUME", "1")
    gate = Gate(backend, rules=RULES)
    assert gate.max_auto_resume() == 1
    gate.review(ToolCall(name="nightly_cleanup", args={"n": 1}), CRON)
    with pytest.raises(AutoResumeExceeded, match=r"^HITL auto-resume exceeded 1 attempts$"):
        gate.review(ToolCall(name="nightly_cleanup", args={"n": 2}), CRON)


def test_the_default_cap_is_ten(backend: Backend, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SIGNOFF_UNATTENDED_MAX_AUTO_RESUME", raising=False)
    gate = Gate(backend, rules=RULES)
    assert gate.max_auto_resume() == 10
    for n in range(10):
        gate.review(ToolCall(name="nightly_cleanup", args={"n": n}), CRON)
    with pytest.raises(AutoResumeExceeded, match=r"^HITL auto-resume exceeded 10 attempts$"):
        gate.review(ToolCall(name="nightly_cleanup", args={"n": 10}), CRON)


def test_the_rules_can_set_the_cap(backend: Backend, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIGNOFF_UNATTENDED_MAX_AUTO_RESUME", "50")
    rules = RuleSet.from_dict({**RULES.to_dict(), "defaults": {"max_auto_resume": 2}})
    assert Gate(backend, rules=rules).max_auto_resume() == 2


def cleanup(turn: str, n: int, *, round: str | None) -> ToolCall:
    return ToolCall(name="nightly_cleanup", args={"turn": turn, "n": n}, round=round)


def test_the_cap_counts_rounds_the_calls_of_one_model_turn(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RULES, max_auto_resume=2)
    for turn in ("m1", "m2"):
        for n in range(3):
            assert gate.review(cleanup(turn, n, round=turn), CRON).execute
    with pytest.raises(AutoResumeExceeded, match=r"^HITL auto-resume exceeded 2 attempts$"):
        gate.review(cleanup("m3", 0, round="m3"), CRON)
    # a round already counted goes on: its further calls, and replays of its decided ones
    assert gate.review(cleanup("m2", 3, round="m2"), CRON).execute
    assert gate.review(cleanup("m1", 0, round="m1"), CRON).execute
    requests = store.list_requests(thread_id="cron-1", limit=100)
    assert sorted(r.round or "" for r in requests) == ["m1"] * 3 + ["m2"] * 4
    assert {r.status for r in requests} == {RequestStatus.APPROVED}
    assert store.count_auto_decisions("cron-1", created_by=requests[0].created_by or "") == 7


def test_a_call_without_a_round_counts_as_a_round_alone(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules=RULES, max_auto_resume=2)
    assert gate.review(cleanup("m1", 0, round="m1"), CRON).execute
    assert gate.review(cleanup("m1", 1, round="m1"), CRON).execute
    assert gate.review(cleanup("loose", 0, round=None), CRON).execute
    with pytest.raises(AutoResumeExceeded, match=r"^HITL auto-resume exceeded 2 attempts$"):
        gate.review(cleanup("loose", 1, round=None), CRON)
    assert gate.review(cleanup("m1", 2, round="m1"), CRON).execute  # m1 was counted already
