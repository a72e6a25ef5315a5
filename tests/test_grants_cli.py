"""Standing grants from the terminal (`signoff approve ID --grant 30m`, `signoff grants`,
`signoff grants revoke ID`), locally and against a server; and an agent's gate whose call a
grant covers runs at once."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from click.testing import Result
from typer.testing import CliRunner

from signoff import Client, Gate, GrantAsk, Pending, RuleSet, Scope, ToolCall
from signoff._util import utcnow
from signoff.cli import app
from signoff.requests import NewRequest, Request, RequestStatus
from signoff.rules.effective import RequestRule
from signoff.store import SQLiteStore, Store

from .live import LiveServer

Cli = Callable[..., Result]
RULE = RequestRule(approvers=("alice",), max_grant=timedelta(hours=1))


def local_cli(path: Path) -> Cli:
    runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None})
    return lambda *args: runner.invoke(app, ["--db", str(path), *args])


def ask(store: Store, call_id: str, args: dict[str, object] | None = None) -> Request:
    new = NewRequest(
        thread_id="t",
        tool_call_id=call_id,
        tool_name="deploy",
        args=args or {"env": "prod"},
        description="d",
        deadline=utcnow() + timedelta(hours=1),
        rule=RULE,
        agent="bot",
    )
    return store.create_request(new)[0]


def test_approve_with_a_grant_then_list_and_revoke_it(sqlite_store: SQLiteStore, sqlite_path: Path) -> None:
    store = sqlite_store
    for name in ("alice", "bob"):
        store.add_user(name, role="member", actor="test")
    cli = local_cli(sqlite_path)
    first = ask(store, "c0")
    result = cli("approve", first.id, "--grant", "30m", "--as", "alice")
    assert result.exit_code == 0, result.output
    assert "Standing grant grt_" in result.output
    [grant] = store.list_grants()
    assert grant.expires_at - grant.created_at == timedelta(minutes=30)
    assert ask(store, "c1").status is RequestStatus.APPROVED
    listed = cli("grants")
    assert listed.exit_code == 0, listed.output
    assert grant.id in listed.output and "active" in listed.output and "the same args" in listed.output
    refused = cli("grants", "revoke", grant.id, "--as", "bob")
    assert refused.exit_code != 0
    assert "only alice" in refused.output + refused.stderr
    revoked = cli("grants", "revoke", grant.id, "--as", "alice")
    assert revoked.exit_code == 0, revoked.output
    assert "revoked" in revoked.output
    assert ask(store, "c2").status is RequestStatus.PENDING
    assert "No standing grants." in cli("grants").output
    assert "revoked" in cli("grants", "--all").output


def test_the_cli_refuses_a_grant_the_rule_does_not_allow(
    sqlite_store: SQLiteStore, sqlite_path: Path
) -> None:
    store = sqlite_store
    store.add_user("alice", role="member", actor="test")
    cli = local_cli(sqlite_path)
    request = ask(store, "c0")
    too_long = cli("approve", request.id, "--grant", "2h", "--as", "alice")
    assert too_long.exit_code != 0
    assert "max_grant" in too_long.stderr
    lonely = cli("approve", request.id, "--grant-when", "true", "--as", "alice")
    assert lonely.exit_code != 0
    assert "--grant-when goes with --grant" in lonely.stderr
    assert store.get_request(request.id).status is RequestStatus.PENDING
    scoped = cli(
        "approve",
        request.id,
        "--grant",
        "10m",
        "--grant-scope",
        "thread",
        "--grant-when",
        "true",
        "--as",
        "alice",
    )
    assert scoped.exit_code == 0, scoped.output
    [grant] = store.list_grants()
    assert (grant.scope, grant.thread_id, grant.condition) == ("thread", "t", "true")


SERVER_RULES = RuleSet.from_dict(
    {"tools": {"deploy": {"requires_approval": True, "approvers": ["alice"], "max_grant": "1h"}}}
)


def test_through_a_server_a_covered_call_runs_at_once(sqlite_store: SQLiteStore) -> None:
    store = sqlite_store
    store.add_user("alice", role="member", actor="test")
    store.replace_rules(SERVER_RULES, actor="test")
    with LiveServer(store) as server:
        alice_token = server.user("alice")
        runner = CliRunner(
            env={
                "COLUMNS": "200",
                "SIGNOFF_DB": None,
                "SIGNOFF_URL": server.url,
                "SIGNOFF_TOKEN": alice_token,
            }
        )
        with Client(server.url, server.user("bot", role="agent")) as agent:
            gate = Gate(agent)
            scope = Scope(thread_id="t1", agent="bot")
            first = gate.submit(ToolCall(name="deploy", args={"env": "prod"}, id="c0"), scope)
            assert isinstance(first, Pending)
            result = runner.invoke(app, ["approve", first.request.id, "--grant", "15m"])
            assert result.exit_code == 0, result.output
            ran: list[str] = []
            reply = gate.run(
                ToolCall(name="deploy", args={"env": "prod"}, id="c1"),
                lambda env: ran.append(env) or "ok",
                scope,
            )
            assert ran == ["prod"] and reply.executed and reply.value == "ok"
            other = gate.submit(ToolCall(name="deploy", args={"env": "dev"}, id="c2"), scope)
            assert isinstance(other, Pending)
        listed = runner.invoke(app, ["grants", "--json"])
        assert listed.exit_code == 0, listed.output
        assert '"granted_by": "alice"' in listed.output
        with Client(server.url, alice_token) as alice:
            [grant] = alice.list_grants()
            assert alice.revoke_grant(grant.id).revoked_by == "alice"
            assert alice.list_grants() == []
        decided = store.get_request(first.request.id)
        assert decided.granted_id == grant.id


def test_a_client_sends_the_grant_it_asks_for() -> None:
    ask_ = GrantAsk(lifetime=timedelta(minutes=45), scope="app", when="args.n < 3")
    assert ask_.to_dict() == {"minutes": 45.0, "scope": "app", "when": "args.n < 3"}
    assert GrantAsk.parse(ask_.to_dict()) == ask_


def test_explain_says_whether_grants_may_be_given(tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "tools:\n"
        "  deploy: {requires_approval: true, max_grant: 45m}\n"
        "  pay: {requires_approval: true, max_grant: 45m, quorum: 2}\n",
        encoding="utf-8",
    )
    runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None})
    deploy = runner.invoke(app, ["explain", "deploy", "--rules", str(rules)])
    assert "standing grants: up to 45m (max_grant)" in deploy.output
    pay = runner.invoke(app, ["explain", "pay", "--rules", str(rules)])
    assert "standing grants: none: 2 approvers must agree" in pay.output
    as_json = runner.invoke(app, ["explain", "deploy", "--rules", str(rules), "--json"])
    assert '"max_grant_seconds": 2700.0' in as_json.output
