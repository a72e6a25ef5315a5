"""`signoff users`, `signoff groups`, `signoff agents` and `signoff tokens` (issue 18, part 2), on
the database itself (as `--as`) and through a server (as the token's user), on SQLite and
PostgreSQL: the same commands and answers either way; every change one audit entry with before
and after; bad input (an unknown person, a bad role, twice, the last admin) exits non-zero with
the reason and changes nothing; through a server, a member is refused."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from signoff import Gate, Pending, RuleSet, Scope, ToolCall
from signoff.cli import app
from signoff.client import Client
from signoff.errors import NotAuthenticated
from signoff.store import Store

from .conftest import url_for
from .live import LiveServer

Cli = Callable[..., Result]
RULES = RuleSet.from_dict({"tools": {"deploy": {"requires_approval": True}}})


@pytest.fixture(params=["local", "remote"])
def cli(request: pytest.FixtureRequest, store: Store) -> Iterator[Cli]:
    """The CLI on the test's database (as root) or through a server over it (root's token)."""
    store.add_user("root", role="admin", actor="test")
    store.add_user("alice", role="member", actor="test")
    env: dict[str, str | None] = {"COLUMNS": "200", "SIGNOFF_TOKEN_TTL": None, "SIGNOFF_TOKEN_MAX_TTL": None}
    if request.param == "local":
        env.update(
            SIGNOFF_DB=url_for(store), SIGNOFF_URL=None, SIGNOFF_TOKEN=None, LOGNAME="root", USER="root"
        )
        runner = CliRunner(env=env)
        yield lambda *args: runner.invoke(app, list(args))
        return
    with LiveServer(store) as server:
        env.update(SIGNOFF_DB=None, SIGNOFF_URL=server.url, SIGNOFF_TOKEN=server.user("root"))
        runner = CliRunner(env=env)
        request.node.server = server
        yield lambda *args: runner.invoke(app, list(args))


def ok(result: Result) -> str:
    assert result.exit_code == 0, result.output
    return result.output


def refused(result: Result, says: str) -> None:
    assert result.exit_code != 0, result.output
    assert says in result.output, result.output


def snapshot(store: Store) -> tuple[Any, ...]:
    tokens = [{**token.to_dict(), "used_at": None} for token in store.list_credentials("token")]
    return ([user.to_dict() for user in store.list_users()], store.group_members(), tokens)


def changes(store: Store) -> list[str]:
    return [e.action for e in store.audit_entries() if e.actor == "root" and e.action != "access.refused"]


def test_a_person_is_added_disabled_enabled_regrouped_and_shown(cli: Cli, store: Store) -> None:
    assert "Added member erin" in ok(cli("users", "add", "erin", "--email", "erin@example.com"))
    assert "Disabled erin" in ok(cli("users", "disable", "erin"))
    assert store.get_user("erin").disabled  # type: ignore[union-attr]
    assert "Enabled erin" in ok(cli("users", "enable", "erin"))
    assert "erin is now admin" in ok(cli("users", "set-role", "erin", "admin"))
    assert "Saved erin" in ok(cli("users", "edit", "erin", "--display-name", "Erin"))
    ok(cli("groups", "add", "ops", "erin"))
    assert json.loads(ok(cli("groups", "list", "--json"))) == {"ops": ["erin"]}
    shown = json.loads(ok(cli("users", "show", "erin", "--json")))
    assert shown["role"] == "admin" and shown["groups"] == ["ops"] and shown["display_name"] == "Erin"
    assert "erin  admin  groups: ops" in ok(cli("users", "list"))
    ok(cli("groups", "remove", "ops", "erin"))
    assert store.group_members() == {}
    assert changes(store) == [
        "user.added",
        "user.updated",
        "user.updated",
        "user.updated",
        "user.updated",
        "group.member_added",
        "group.member_removed",
    ]
    for entry in store.audit_entries():
        if entry.actor == "root" and entry.action.startswith(("user.", "group.")):
            assert "before" in entry.data and "after" in entry.data, entry


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("users", "disable", "ghost"), "no user named 'ghost'"),
        (("users", "show", "ghost"), "no user named 'ghost'"),
        (("users", "set-role", "alice", "owner"), "role"),
        (("users", "enable", "alice"), "alice is already enabled"),
        (("users", "set-role", "root", "member"), "root is the last enabled admin"),
        (("users", "disable", "root"), "root is the last enabled admin"),
        (("users", "add", "alice"), "user 'alice' already exists"),
        (("groups", "add", "ops", "ghost"), "no user named 'ghost'"),
        (("groups", "remove", "ops", "alice"), "alice is not in group ops"),
        (("tokens", "revoke", "tok_nope"), "no token 'tok_nope'"),
        (("agents", "create", "alice"), "user 'alice' already exists"),
        (("agents", "create", "bot", "--expires-in", "9999d"), "at most"),
    ],
)
def test_bad_input_exits_with_the_reason_and_changes_nothing(
    cli: Cli, store: Store, args: tuple[str, ...], says: str
) -> None:
    before, logged = snapshot(store), changes(store)
    refused(cli(*args), says)
    assert snapshot(store) == before
    assert changes(store) == logged


def test_twice_is_refused_the_second_time(cli: Cli, store: Store) -> None:
    ok(cli("users", "disable", "alice"))
    ok(cli("groups", "add", "ops", "alice"))
    before, logged = snapshot(store), changes(store)
    refused(cli("users", "disable", "alice"), "alice is already disabled")
    refused(cli("groups", "add", "ops", "alice"), "alice is already in group ops")
    assert snapshot(store) == before and changes(store) == logged


def test_an_agent_and_its_token_are_made_listed_used_and_revoked(
    cli: Cli, store: Store, request: pytest.FixtureRequest
) -> None:
    made = json.loads(
        ok(cli("agents", "create", "deployer", "--label", "ci", "--expires-in", "2d", "--json"))
    )
    secret, token_id = made["token"]["token"], made["token"]["id"]
    assert made["agent"]["role"] == "agent" and secret.startswith("so_tok_")
    assert changes(store) == ["agent.created"]
    assert secret not in ok(cli("agents", "show", "deployer")) + ok(cli("tokens", "list"))
    assert f"{token_id}  deployer  ci  active" in ok(cli("tokens", "list", "--user", "deployer"))
    assert "deployer  agent" in ok(cli("agents", "list"))
    assert store.authenticate(secret) is not None  # the agent can use it
    server = getattr(request.node, "server", None)
    if server is not None:  # through the server, the agent asks over HTTP; its page lists it
        with Client(server.url, secret, retry_for=0) as agent:
            asked = Gate(agent, rules=RULES).submit(
                ToolCall(name="deploy", args={}, id="c1"), Scope(thread_id="t")
            )
            assert isinstance(asked, Pending)
        assert f"asked {asked.request.id}  deploy  pending" in ok(cli("agents", "show", "deployer"))
    assert f"Revoked {token_id}" in ok(cli("tokens", "revoke", token_id))
    assert store.authenticate(secret) is None
    refused(cli("tokens", "revoke", token_id), "already revoked")
    if server is not None:
        with Client(server.url, secret, retry_for=0) as agent, pytest.raises(NotAuthenticated):
            agent.me()


def test_through_a_server_a_member_is_refused(store: Store) -> None:
    store.add_user("root", role="admin", actor="test")
    with LiveServer(store) as server:
        env = {
            "COLUMNS": "200",
            "SIGNOFF_DB": None,
            "SIGNOFF_URL": server.url,
            "SIGNOFF_TOKEN": server.user("alice"),
        }
        runner = CliRunner(env=env)
        before = snapshot(store)
        for args in (
            ("users", "disable", "root"),
            ("groups", "add", "ops", "alice"),
            ("agents", "create", "bot"),
        ):
            refused(runner.invoke(app, list(args)), "alice is not an admin")
        assert snapshot(store) == before
