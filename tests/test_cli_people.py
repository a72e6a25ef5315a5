"""The local CLI and the console decide as people, like the server's callers (issue 17, item 2):
in a store that has users, `--as` (or a gate's `actor`) must name an existing, enabled person;
an agent, an unknown name or a disabled person is refused in the server's words and audited.
The agent that asked never decides its own request, even in a store without users."""

from __future__ import annotations

import io
from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from signoff import Approve, Gate, Pending, ReviewTimeout, RuleSet, Scope, SimpleConsoleUI, ToolCall
from signoff.cli import app
from signoff.requests import ExecutionStatus, Request, RequestStatus
from signoff.store import SQLiteStore, Store
from tests.helpers import decided_digest

from .test_console import Script

RULES = RuleSet.from_dict({"tools": {"deploy": {"requires_approval": True}}})
DECIDING = {
    "approve": [],
    "reject": ["--message", "no"],
    "edit": ["--args", '{"env": "staging"}'],
    "respond": ["--message", "done already"],
}
REFUSED = {
    "bot": "bot is an agent; only people decide",
    "ghost": "ghost is not a user of this signoff; only its people decide",
    "dora": "dora is disabled; only enabled people decide",
}


def cli(path: Path, *args: str) -> Result:
    runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None, "SIGNOFF_URL": None})
    return runner.invoke(app, ["--db", str(path), *args])


def submit(store: Store, call_id: str) -> Request:
    found = Gate(store, rules=RULES).submit(
        ToolCall(name="deploy", args={"env": "prod"}, id=call_id), Scope(thread_id="t")
    )
    assert isinstance(found, Pending)
    return found.request


@pytest.fixture
def people(sqlite_store: SQLiteStore) -> SQLiteStore:
    sqlite_store.add_user("alice", role="member", actor="test")
    sqlite_store.add_user("root", role="admin", actor="test")
    sqlite_store.add_user("bot", role="agent", actor="test")
    sqlite_store.add_user("dora", role="member", actor="test")
    sqlite_store.update_user("dora", disabled=True, actor="test")
    return sqlite_store


def refusals(store: Store, request_id: str) -> list[tuple[str, str, str, str]]:
    return [
        (entry.action, entry.actor, entry.channel, entry.data["reason"])
        for entry in store.audit_entries(request_id=request_id)
        if entry.action.endswith("refused")
    ]


@pytest.mark.parametrize("command", sorted(DECIDING))
@pytest.mark.parametrize("who", sorted(REFUSED))
def test_a_decision_as_an_agent_an_unknown_name_or_a_disabled_person_is_refused_and_audited(
    people: SQLiteStore, sqlite_path: Path, command: str, who: str
) -> None:
    request = submit(people, f"{command}-{who}")
    result = cli(sqlite_path, command, request.id, "--as", who, *DECIDING[command])
    assert result.exit_code == 1, result.output
    assert result.stderr.strip() == f"Error: {REFUSED[who]}"
    assert people.get_request(request.id).status is RequestStatus.PENDING
    assert refusals(people, request.id) == [("decision.refused", who, "cli", REFUSED[who])]
    [entry] = [e for e in people.audit_entries(request_id=request.id) if e.action == "decision.refused"]
    assert entry.data["type"] == command


def test_a_person_of_the_store_decides(people: SQLiteStore, sqlite_path: Path) -> None:
    request = submit(people, "ok")
    assert cli(sqlite_path, "approve", request.id, "--as", "alice").exit_code == 0
    decided = people.get_request(request.id)
    assert decided.status is RequestStatus.APPROVED
    assert decided.decision is not None and decided.decision.actor == "alice"


def test_the_agent_that_asked_never_decides_even_in_a_store_without_users(
    sqlite_store: SQLiteStore, sqlite_path: Path
) -> None:
    request = submit(sqlite_store, "own")
    result = cli(sqlite_path, "approve", request.id, "--as", request.created_by)
    assert result.exit_code == 1
    assert f"{request.created_by} is an agent; only people decide" in result.stderr
    assert sqlite_store.get_request(request.id).status is RequestStatus.PENDING
    assert [action for action, *_ in refusals(sqlite_store, request.id)] == ["decision.refused"]
    assert (
        cli(sqlite_path, "approve", request.id, "--as", "whoever").exit_code == 0
    )  # nobody to check against


def test_cancel_is_for_the_agent_that_asked_or_an_admin(people: SQLiteStore, sqlite_path: Path) -> None:
    request = submit(people, "cancel")
    for who in ("alice", "ghost", "dora"):
        result = cli(sqlite_path, "cancel", request.id, "--as", who)
        assert result.exit_code == 1, result.output
        assert f"only the agent that asked (or an admin) may cancel request {request.id}" in result.stderr
    assert people.get_request(request.id).status is RequestStatus.PENDING
    assert [(action, actor) for action, actor, *_ in refusals(people, request.id)] == [
        ("request.change_refused", "alice"),
        ("request.change_refused", "ghost"),
        ("request.change_refused", "dora"),
    ]
    assert cli(sqlite_path, "cancel", request.id, "--as", "root").exit_code == 0
    assert people.get_request(request.id).status is RequestStatus.CANCELLED


def test_rerun_is_for_people(people: SQLiteStore, sqlite_path: Path) -> None:
    request = submit(people, "rerun")
    people.decide(request.id, Approve(), actor="alice")
    claim = people.claim_execution(
        request.id, args_digest=decided_digest(people, request.id), lease=timedelta(minutes=1)
    )
    people.finish_execution(request.id, claim.token, succeeded=False, error="boom")
    for who in ("bot", "ghost", "dora"):
        result = cli(sqlite_path, "rerun", request.id, "--as", who)
        assert result.exit_code == 1, result.output
        assert REFUSED[who] in result.stderr
    assert people.get_execution(request.id).status is ExecutionStatus.FAILED  # type: ignore[union-attr]
    assert cli(sqlite_path, "rerun", request.id, "--as", "alice").exit_code == 0
    assert people.get_execution(request.id).status is ExecutionStatus.NOT_STARTED  # type: ignore[union-attr]


def test_the_console_decides_only_as_a_person_of_the_store(people: SQLiteStore) -> None:
    """A console prompt answered by someone the store does not know as a person decides
    nothing: the refusal is shown and audited, and the request waits for a person elsewhere."""
    out = io.StringIO()
    gate = Gate(people, rules=RULES, ui=SimpleConsoleUI(input=Script(["y"]), stdout=out), actor="ghost")
    with pytest.raises(ReviewTimeout):
        gate.review(ToolCall(name="deploy", args={}, id="console"), Scope(thread_id="t"), timeout=0.5)
    request = people.find_request("t", "console")
    assert request is not None and request.status is RequestStatus.PENDING
    assert "ghost is not a user of this signoff; only its people decide" in out.getvalue()
    assert [actor for _, actor, *_ in refusals(people, request.id)] == ["ghost"]
