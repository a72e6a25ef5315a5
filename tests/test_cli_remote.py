"""The CLI against a server: SIGNOFF_URL and SIGNOFF_TOKEN set, the token's user acts."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from signoff import Client, Gate, Pending, Request, RequestStatus, RuleSet, Scope, Store, ToolCall
from signoff.cli import app
from tests.conftest import AGENT_USER
from tests.live import LiveServer

RULES = RuleSet.from_dict(
    {
        "tools": {
            "delete_db": {
                "requires_approval": True,
                "allowed_decisions": ["approve", "reject", "edit"],
                "approvers": ["alice"],
                "redact": ["password"],
            }
        }
    }
)

Cli = Callable[..., Result]


def cli_for(server: LiveServer, token: str | None) -> Cli:
    env = {"COLUMNS": "200", "SIGNOFF_DB": None, "SIGNOFF_URL": server.url, "SIGNOFF_TOKEN": token}
    runner = CliRunner(env=env)

    def run(*args: str) -> Result:
        return runner.invoke(app, list(args))

    return run


@pytest.fixture
def alice_cli(live_server: LiveServer) -> Cli:
    return cli_for(live_server, live_server.user("alice"))


def submit(server: LiveServer, args: dict[str, Any], *, call_id: str = "c1") -> Request:
    """The agent asks, through the server."""
    with Client(server.url, server.user(AGENT_USER, role="agent")) as client:
        found = Gate(client, rules=RULES).submit(
            ToolCall(name="delete_db", args=args, id=call_id), Scope(thread_id="t1", agent="bot")
        )
    assert isinstance(found, Pending)
    return found.request


def assert_clean_error(result: Result, code: int, *fragments: str) -> None:
    assert result.exit_code == code, result.output
    assert result.stderr.startswith("Error: "), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    for fragment in fragments:
        assert fragment in result.stderr


def test_pending_show_and_approve_through_the_server(
    live_server: LiveServer, alice_cli: Cli, store: Store
) -> None:
    request = submit(live_server, {"target": "users", "password": "hunter2"})

    listed = alice_cli("pending", "--json")
    assert listed.exit_code == 0, listed.output
    assert [item["id"] for item in json.loads(listed.stdout)] == [request.id]
    table = alice_cli("pending")
    assert request.id in table.stdout and "delete_db" in table.stdout
    assert "hunter2" not in table.stdout

    shown = alice_cli("show", request.id)
    assert shown.exit_code == 0, shown.output
    assert "target" in shown.stdout and "users" in shown.stdout
    assert "hunter2" not in shown.stdout
    assert "request.created" in shown.stdout

    approved = alice_cli("approve", request.id, "--comment", "go ahead")
    assert approved.exit_code == 0, approved.output
    assert f"Request {request.id}: approved by alice (api)" in approved.stdout

    stored = store.get_request(request.id)
    assert stored.status is RequestStatus.APPROVED
    assert stored.decision is not None
    assert (stored.decision.actor, stored.decision.channel) == ("alice", "api")
    assert stored.final_args == {"target": "users", "password": "hunter2"}, "the real args run"
    decided = [e for e in store.audit_entries(request_id=request.id) if e.action == "request.decided"]
    assert [(e.actor, e.data.get("comment")) for e in decided] == [("alice", "go ahead")]

    details = json.loads(alice_cli("show", request.id, "--json").stdout)
    assert [d["actor"] for d in details["decisions"]] == ["alice"]
    assert alice_cli("pending", "--json").stdout.strip() == "[]"


def test_acting_as_someone_else_is_refused(live_server: LiveServer, alice_cli: Cli, store: Store) -> None:
    request = submit(live_server, {"target": "users"})
    refused = alice_cli("approve", request.id, "--as", "bob")
    assert_clean_error(refused, 1, "--as bob", "the user of your token (alice)")
    assert store.get_request(request.id).status is RequestStatus.PENDING
    assert alice_cli("reject", request.id, "--as", "alice", "--message", "no").exit_code == 0
    assert store.get_request(request.id).status is RequestStatus.REJECTED


def test_the_server_decides_who_may_see_and_decide(live_server: LiveServer, store: Store) -> None:
    request = submit(live_server, {"target": "users"})
    mallory = cli_for(live_server, live_server.user("mallory"))
    assert json.loads(mallory("pending", "--json").stdout) == []
    assert_clean_error(mallory("show", request.id), 1, f"mallory is not an approver of request {request.id}")
    assert_clean_error(mallory("approve", request.id), 1, "mallory is not an approver")
    assert store.get_request(request.id).status is RequestStatus.PENDING


def test_an_edit_never_sends_a_masked_argument_back(
    live_server: LiveServer, alice_cli: Cli, store: Store
) -> None:
    request = submit(live_server, {"target": "users", "password": "hunter2"})
    refused = alice_cli("edit", request.id, "--set", "target=orders")
    assert_clean_error(refused, 2, "the server masks password")
    assert store.get_request(request.id).status is RequestStatus.PENDING
    edited = alice_cli("edit", request.id, "--set", "target=orders", "--set", "password=s3cret")
    assert edited.exit_code == 0, edited.output
    assert store.get_request(request.id).final_args == {"target": "orders", "password": "s3cret"}


def test_rules_are_changed_on_the_server_by_an_admin(live_server: LiveServer, store: Store) -> None:
    admin = cli_for(live_server, live_server.user("root", role="admin"))
    result = admin("tool", "set", "wire_money", "--requires-approval", "--approvers", "alice")
    assert result.exit_code == 0, result.output
    assert store.get_layer("tool", "wire_money") == {"requires_approval": True, "approvers": ["alice"]}
    [entry] = list(store.audit_entries(action="rules.set"))
    assert (entry.actor, entry.channel) == ("root", "api")
    explained = json.loads(admin("explain", "wire_money", "--json").stdout)
    assert explained["ask"] is True
    exported = admin("config", "export")
    assert exported.exit_code == 0, exported.output
    assert RuleSet.from_yaml(exported.stdout).tools["wire_money"].approvers == ["alice"]
    assert admin("audit", "verify").stdout.startswith("ok, ")
    anchor = admin("audit", "anchor").stdout.strip()
    assert anchor == str(store.audit_anchor())
    against = admin("audit", "verify", "--anchor", anchor)
    assert against.exit_code == 0, against.output
    assert against.stdout.strip().endswith(f"it extends the anchor at entry {anchor.split(':')[0]}")
    member = cli_for(live_server, live_server.user("alice"))
    assert_clean_error(member("tool", "delete", "wire_money"), 1, "alice is not an admin")
    assert store.get_layer("tool", "wire_money") is not None


def test_commands_without_an_api_say_so(live_server: LiveServer, alice_cli: Cli) -> None:
    assert_clean_error(alice_cli("sweep"), 1, "`signoff sweep` works on a local database only", "SIGNOFF_URL")
    assert_clean_error(
        alice_cli("users", "addresses", "alice"),
        1,
        "`signoff users addresses` works on a local database only",
    )
    # `users list` has an API now (admins only): a member is refused by the server
    assert_clean_error(alice_cli("users", "list"), 1, "alice is not an admin")


def test_a_server_without_a_token_or_with_a_bad_one(live_server: LiveServer) -> None:
    assert_clean_error(cli_for(live_server, None)("pending"), 1, "set SIGNOFF_TOKEN too")
    assert_clean_error(
        cli_for(live_server, "so_tok_wrong")("pending"), 1, "the API token is invalid, expired or revoked"
    )
