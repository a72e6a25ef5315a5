"""`signoff approve --all` / `signoff reject --all`: a confirmation naming how many, `--yes`,
the same batch locally and through a server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from signoff import Client, Gate, Pending, Request, RuleSet, Scope, ToolCall
from signoff.cli import app
from signoff.requests import RequestStatus
from signoff.store import SQLiteStore, Store

from .live import LiveServer

RULES = RuleSet.from_yaml(
    """
tools:
  send_email: {requires_approval: true, approvers: [alice]}
  wipe: {requires_approval: true, approvers: [alice], batch: false}
"""
)

Cli = Callable[..., Result]


@pytest.fixture
def cli(sqlite_path: Path) -> Cli:
    runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None, "SIGNOFF_URL": None})

    def run(*args: str, answer: str | None = None) -> Result:
        return runner.invoke(app, ["--db", str(sqlite_path), *args], input=answer)

    return run


def submit(backend: Store | Client, tool: str, call_id: str, thread: str = "t1") -> Request:
    found = Gate(backend, rules=RULES).submit(
        ToolCall(name=tool, args={"n": call_id}, id=call_id), Scope(thread_id=thread, agent="bot")
    )
    assert isinstance(found, Pending)
    return found.request


def statuses(store: Store, requests: list[Request]) -> list[RequestStatus]:
    return [store.get_request(request.id).status for request in requests]


def test_approve_all_asks_naming_how_many_and_does_nothing_when_declined(
    cli: Cli, sqlite_store: SQLiteStore
) -> None:
    emails = [submit(sqlite_store, "send_email", f"e{n}") for n in range(3)]
    other = submit(sqlite_store, "send_email", "o", thread="t2")

    declined = cli(
        "approve", "--all", "--tool", "send_email", "--thread", "t1", "--as", "alice", answer="n\n"
    )

    assert declined.exit_code == 1
    assert "Approve 3 request(s) matching tool send_email, thread_id t1?" in declined.stdout
    assert statuses(sqlite_store, [*emails, other]) == [RequestStatus.PENDING] * 4
    assert list(sqlite_store.audit_entries(action="batch.decided")) == []

    confirmed = cli("approve", "--all", "--thread", "t1", "--as", "alice", "--reason", "fine", answer="y\n")

    assert confirmed.exit_code == 0, confirmed.output
    assert "3 approved, 0 skipped" in confirmed.stdout
    assert statuses(sqlite_store, emails) == [RequestStatus.APPROVED] * 3
    assert sqlite_store.get_request(other.id).status is RequestStatus.PENDING
    (entry,) = sqlite_store.audit_entries(action="batch.decided")
    assert entry.channel == "cli" and entry.actor == "alice"


def test_reject_all_with_yes_skips_what_a_rule_keeps_out_of_batches(
    cli: Cli, sqlite_store: SQLiteStore
) -> None:
    email = submit(sqlite_store, "send_email", "e")
    wipe = submit(sqlite_store, "wipe", "w")

    result = cli("reject", "--all", "--thread", "t1", "--reason", "not now", "--yes", "--as", "alice")

    assert result.exit_code == 0, result.output
    assert "1 rejected, 1 skipped" in result.stdout
    assert f"skipped {wipe.id}" in result.stdout and "batch: false" in result.stdout
    decided = sqlite_store.get_request(email.id)
    assert decided.status is RequestStatus.REJECTED
    assert decided.decision is not None and decided.decision.to_dict()["message"] == "not now"
    assert sqlite_store.get_request(wipe.id).status is RequestStatus.PENDING


def test_someone_else_finds_nothing_to_decide(cli: Cli, sqlite_store: SQLiteStore) -> None:
    email = submit(sqlite_store, "send_email", "e")
    result = cli("approve", "--all", "--tool", "send_email", "--yes", "--as", "mallory")
    assert result.exit_code == 0
    assert "No open request you may decide matches tool send_email" in result.stdout
    assert sqlite_store.get_request(email.id).status is RequestStatus.PENDING


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["approve", "--all"], "at least one of --tool, --thread"),
        (["approve", "req_1", "--all", "--tool", "x"], "either an ID or --all"),
        (["reject", "--tool", "x"], "give --all too"),
        (["approve"], "give the request's ID"),
    ],
)
def test_bad_combinations_are_refused(
    cli: Cli, sqlite_store: SQLiteStore, args: list[str], said: str
) -> None:
    email = submit(sqlite_store, "send_email", "e")
    result = cli(*args, "--as", "alice")
    assert result.exit_code == 2, result.output
    assert said in result.stderr
    assert sqlite_store.get_request(email.id).status is RequestStatus.PENDING


def test_approve_all_through_a_server(live_server: LiveServer) -> None:
    live_server.store.replace_rules(RULES, actor="test")
    with Client(live_server.url, live_server.user("bot", role="agent")) as agent:
        emails = [submit(agent, "send_email", f"e{n}") for n in range(2)]
        wipe = submit(agent, "wipe", "w")
    token = live_server.user("alice")
    env = {"COLUMNS": "200", "SIGNOFF_DB": None, "SIGNOFF_URL": live_server.url, "SIGNOFF_TOKEN": token}
    result = CliRunner(env=env).invoke(app, ["approve", "--all", "--thread", "t1"], input="y\n")
    assert result.exit_code == 0, result.output
    assert "Approve 3 request(s)" in result.stdout
    assert "2 approved, 1 skipped" in result.stdout
    assert statuses(live_server.store, emails) == [RequestStatus.APPROVED] * 2
    assert live_server.store.get_request(wipe.id).status is RequestStatus.PENDING
    (entry,) = live_server.store.audit_entries(action="batch.decided")
    assert entry.channel == "api"


def test_explain_and_show_say_a_rule_keeps_requests_out_of_batches(
    cli: Cli, sqlite_store: SQLiteStore
) -> None:
    sqlite_store.replace_rules(RULES, actor="test")
    explained = cli("explain", "wipe")
    assert explained.exit_code == 0, explained.output
    assert "batch: false: decided one at a time" in explained.stdout
    assert "batch: false" not in cli("explain", "send_email").stdout
    as_json = cli("explain", "wipe", "--json")
    assert '"batch": false' in as_json.stdout
    wipe = submit(sqlite_store, "wipe", "w")
    shown = cli("show", wipe.id, "--as", "alice")
    assert shown.exit_code == 0, shown.output
    assert "decided alone: batch: false" in shown.stdout
