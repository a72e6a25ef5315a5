"""The three rule layers from the CLI (seed 004's semantics), checked through the store and explain."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from signoff import Gate, Pending, Scope, ToolCall
from signoff.cli import app
from signoff.store import SQLiteStore

Cli = Callable[..., Result]


@pytest.fixture
def cli(sqlite_path: Path) -> Cli:
    runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None})

    def run(*args: str) -> Result:
        result = runner.invoke(app, ["--db", str(sqlite_path), *args])
        assert "Traceback" not in result.output
        return result

    return run


def ok(result: Result) -> Result:
    assert result.exit_code == 0, result.output
    return result


def explain(cli: Cli, tool: str, *options: str) -> dict[str, Any]:
    explained: dict[str, Any] = json.loads(ok(cli("explain", tool, "--json", *options)).stdout)
    return explained


# -- tool -----------------------------------------------------------------------------------------


def test_tool_set_info_round_trip(cli: Cli, sqlite_store: SQLiteStore) -> None:
    ok(
        cli(
            "tool", "set", "delete_db", "--requires-approval", "--approval-decisions", "approve,reject",
            "--approval-description", "AI wants to wipe {target}", "--approvers", "alice, group:ops",
            "--deadline", "1h", "--on-expire", "fail", "--quorum", "2", "--redact", "password",
            "--when", 'args.env == "prod"',
        )
    )  # fmt: skip
    expected = {
        "requires_approval": True,
        "allowed_decisions": ["approve", "reject"],
        "description": "AI wants to wipe {target}",
        "approvers": ["alice", "group:ops"],
        "deadline": "1h",
        "on_expire": "fail",
        "quorum": 2,
        "redact": ["password"],
        "when": 'args.env == "prod"',
    }
    assert sqlite_store.get_layer("tool", "delete_db") == expected
    assert json.loads(ok(cli("tool", "info", "delete_db", "--json")).stdout) == expected
    info = ok(cli("tool", "info", "delete_db")).stdout
    assert "HITL Approval: tool delete_db" in info
    assert "requires_approval: true" in info
    prod = explain(cli, "delete_db", "--args", '{"env": "prod"}')
    assert (prod["ask"], prod["layer"], prod["allowed_decisions"]) == (True, "tool", ["approve", "reject"])
    assert (prod["approvers"], prod["quorum"], prod["on_expire"]) == (["alice", "group:ops"], 2, "fail")
    assert explain(cli, "delete_db", "--args", '{"env": "dev"}')["ask"] is False


def test_tool_set_merges_and_empty_text_removes(cli: Cli, sqlite_store: SQLiteStore) -> None:
    ok(cli("tool", "set", "send_email", "--requires-approval", "--approval-decisions", "approve,edit"))
    ok(cli("tool", "set", "send_email", "--approval-description", "Mail to {to}", "--when", "true"))
    assert sqlite_store.get_layer("tool", "send_email") == {
        "requires_approval": True,
        "allowed_decisions": ["approve", "edit"],
        "description": "Mail to {to}",
        "when": "true",
    }
    ok(cli("tool", "set", "send_email", "--when", "", "--approval-decisions", ""))
    assert sqlite_store.get_layer("tool", "send_email") == {
        "requires_approval": True,
        "description": "Mail to {to}",
    }
    assert explain(cli, "send_email")["allowed_decisions"] == ["approve", "edit", "reject", "respond"]
    ok(cli("tool", "set", "send_email", "--no-requires-approval"))
    assert (explain(cli, "send_email")["ask"], explain(cli, "send_email")["layer"]) == (False, "tool")


@pytest.mark.parametrize(
    "bad",
    [
        ["--approval-decisions", "approve,maybe"],
        ["--on-expire", "never"],
        ["--deadline", "soon"],
        ["--when", "args.env ==="],
    ],
)
def test_tool_set_with_bad_settings_changes_nothing(
    cli: Cli, sqlite_store: SQLiteStore, bad: list[str]
) -> None:
    ok(cli("tool", "set", "delete_db", "--requires-approval"))
    result = cli("tool", "set", "delete_db", "--no-requires-approval", *bad)
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: invalid tool settings: ")
    assert sqlite_store.get_layer("tool", "delete_db") == {"requires_approval": True}


def test_tool_delete(cli: Cli, sqlite_store: SQLiteStore) -> None:
    ok(cli("tool", "set", "delete_db", "--requires-approval"))
    assert explain(cli, "delete_db")["ask"] is True
    ok(cli("tool", "delete", "delete_db"))
    assert sqlite_store.get_layer("tool", "delete_db") is None
    assert explain(cli, "delete_db")["ask"] is False
    again = cli("tool", "delete", "delete_db")
    assert again.exit_code == 1
    assert "no tool settings named 'delete_db'" in again.stderr
    info = cli("tool", "info", "delete_db")
    assert info.exit_code == 1
    assert "signoff tool set delete_db" in info.stderr


# -- service --------------------------------------------------------------------------------------


def test_service_modes(cli: Cli, sqlite_store: SQLiteStore) -> None:
    ok(cli("service", "set", "tavily", "--approval-mode", "whitelist", "--tools", "crawl"))
    assert sqlite_store.get_layer("service", "tavily") == {"approval_mode": "whitelist", "tools": ["crawl"]}
    assert explain(cli, "tavily.crawl")["ask"] is True
    assert explain(cli, "tavily.search")["ask"] is False
    ok(cli("service", "set", "tavily", "--approval-mode", "blacklist", "--tools", "search"))
    assert explain(cli, "tavily.search")["ask"] is False
    assert explain(cli, "tavily.brand_new_tool")["ask"] is True
    ok(cli("service", "set", "tavily", "--no-requires-approval"))
    assert explain(cli, "tavily.brand_new_tool")["ask"] is False
    assert "approval_mode: blacklist" in ok(cli("service", "info", "tavily")).stdout
    ok(cli("service", "delete", "tavily"))
    assert sqlite_store.get_layer("service", "tavily") is None
    bad = cli("service", "set", "tavily", "--approval-mode", "greylist")
    assert bad.exit_code == 1
    assert "approval_mode" in bad.stderr


# -- agent ----------------------------------------------------------------------------------------


def test_agent_interrupt_on_and_off_merge(cli: Cli, sqlite_store: SQLiteStore) -> None:
    ok(cli("tool", "set", "ls", "--requires-approval"))
    ok(
        cli(
            "agent",
            "set",
            "support",
            "--interrupt-on",
            "send_email",
            "--interrupt-on",
            "execute",
            "--interrupt-off",
            "ls",
        )
    )
    ok(cli("agent", "set", "support", "--interrupt-on", "transfer_money", "--interrupt-off", "send_email"))
    assert sqlite_store.get_layer("agent", "support") == {
        "interrupt_on": {"send_email": False, "execute": True, "ls": False, "transfer_money": True}
    }
    assert explain(cli, "transfer_money", "--agent", "support")["ask"] is True
    assert explain(cli, "ls", "--agent", "support")["layer"] == "agent"
    assert explain(cli, "ls", "--agent", "support")["ask"] is False
    assert explain(cli, "ls", "--agent", "other")["ask"] is True
    ok(cli("agent", "set", "support", "--interrupt-unset", "ls"))
    assert explain(cli, "ls", "--agent", "support")["ask"] is True


def test_agent_hitl_disabled_silences_everything(cli: Cli, sqlite_store: SQLiteStore) -> None:
    ok(cli("tool", "set", "delete_db", "--requires-approval"))
    ok(cli("agent", "set", "support", "--interrupt-on", "send_email"))
    ok(cli("agent", "set", "support", "--hitl-disabled"))
    for tool in ("delete_db", "send_email"):
        silenced = explain(cli, tool, "--agent", "support")
        assert (silenced["ask"], silenced["layer"]) == (False, "agent.hitl_disabled")
    info = ok(cli("agent", "info", "support")).stdout
    assert "hitl_disabled: true" in info
    assert "silenced" in info
    assert "send_email: on" in info
    ok(cli("agent", "set", "support", "--no-hitl-disabled"))
    assert explain(cli, "send_email", "--agent", "support")["ask"] is True
    assert sqlite_store.get_layer("agent", "support") == {
        "hitl_disabled": False,
        "interrupt_on": {"send_email": True},
    }


def test_each_agent_heads_its_cards_with_its_own_prefix(cli: Cli, sqlite_store: SQLiteStore) -> None:
    ok(cli("tool", "set", "send_email", "--requires-approval"))
    ok(cli("agent", "set", "billing", "--description-prefix", "Billing agent wants to act"))
    assert sqlite_store.get_layer("agent", "billing") == {"description_prefix": "Billing agent wants to act"}
    gate = Gate(sqlite_store)
    call = ToolCall(name="send_email", args={"to": "bob"}, id="c1")
    billing = gate.submit(call, Scope(thread_id="t1", agent="billing"))
    other = gate.submit(call, Scope(thread_id="t2", agent="support"))
    assert isinstance(billing, Pending) and isinstance(other, Pending)
    assert billing.request.description.splitlines()[0] == "Billing agent wants to act"
    assert other.request.description.splitlines()[0] == "Tool execution requires approval"
    ok(cli("agent", "set", "billing", "--description-prefix", ""))  # back to the defaults'
    assert sqlite_store.get_layer("agent", "billing") == {}


def test_agent_clear_and_json_replace(cli: Cli, sqlite_store: SQLiteStore) -> None:
    ok(cli("agent", "set", "support", "--interrupt-on", "send_email", "--interrupt-on", "execute"))
    replacement = (
        '{"delete_db": true, "execute": {"allowed_decisions": ["approve", "reject"]}, "send_email": false}'
    )
    ok(cli("agent", "set", "support", "--interrupt-on-json", replacement))
    assert sqlite_store.get_layer("agent", "support") == {
        "interrupt_on": {
            "delete_db": True,
            "execute": {"allowed_decisions": ["approve", "reject"]},
            "send_email": False,
        }
    }
    execute = explain(cli, "execute", "--agent", "support")
    assert (execute["ask"], execute["allowed_decisions"]) == (True, ["approve", "reject"])
    ok(cli("agent", "set", "support", "--clear-interrupt-on"))
    assert sqlite_store.get_layer("agent", "support") == {}
    assert explain(cli, "delete_db", "--agent", "support")["ask"] is False
    assert "interrupt_on: (none)" in ok(cli("agent", "info", "support")).stdout


def test_agent_bad_input_changes_nothing(cli: Cli, sqlite_store: SQLiteStore) -> None:
    ok(cli("agent", "set", "support", "--interrupt-on", "send_email"))
    both = cli("agent", "set", "support", "--interrupt-on", "ls", "--interrupt-off", "ls")
    assert both.exit_code == 2
    assert "ls given to both --interrupt-on and --interrupt-off" in both.stderr
    broken = cli("agent", "set", "support", "--interrupt-on-json", '{"ls": ')
    assert broken.exit_code == 2
    assert "--interrupt-on-json is not valid JSON" in broken.stderr
    wrong_type = cli("agent", "set", "support", "--interrupt-on-json", '["ls"]')
    assert wrong_type.exit_code == 2
    assert "must be a JSON object" in wrong_type.stderr
    invalid = cli("agent", "set", "support", "--interrupt-on-json", '{"ls": {"allowed_decisions": ["nope"]}}')
    assert invalid.exit_code == 1
    assert "invalid agent settings" in invalid.stderr
    assert sqlite_store.get_layer("agent", "support") == {"interrupt_on": {"send_email": True}}


# -- app ------------------------------------------------------------------------------------------


def test_app_override_forces_on_and_off(cli: Cli, sqlite_store: SQLiteStore) -> None:
    ok(cli("tool", "set", "send_email", "--requires-approval"))
    ok(cli("agent", "set", "support", "--interrupt-off", "delete_db", "--interrupt-on", "ls"))
    ok(
        cli(
            "app",
            "set",
            "acme",
            "--interrupt-override",
            "delete_db",
            "--interrupt-override-off",
            "send_email",
        )
    )
    forced_on = explain(cli, "delete_db", "--agent", "support", "--app", "acme")
    assert (forced_on["ask"], forced_on["layer"]) == (True, "app")
    forced_off = explain(cli, "send_email", "--agent", "support", "--app", "acme")
    assert (forced_off["ask"], forced_off["layer"]) == (False, "app")
    assert explain(cli, "delete_db", "--agent", "support", "--app", "other")["ask"] is False
    ok(
        cli(
            "app",
            "set",
            "acme",
            "--interrupt-overrides-json",
            '{"delete_db": {"allowed_decisions": ["approve"]}}',
        )
    )
    assert sqlite_store.get_layer("app", "acme") == {
        "interrupt_overrides": {"delete_db": {"allowed_decisions": ["approve"]}}
    }
    assert explain(cli, "delete_db", "--agent", "support", "--app", "acme")["allowed_decisions"] == [
        "approve"
    ]
    assert explain(cli, "send_email", "--agent", "support", "--app", "acme")["ask"] is True
    ok(cli("app", "set", "acme", "--clear-interrupt-overrides"))
    assert sqlite_store.get_layer("app", "acme") == {}


def test_app_cannot_force_on_what_the_agent_silenced_but_hitl_required_can(
    cli: Cli, sqlite_store: SQLiteStore
) -> None:
    ok(cli("agent", "set", "support", "--hitl-disabled"))
    ok(cli("app", "set", "acme", "--interrupt-override", "transfer_money"))
    silenced = explain(cli, "transfer_money", "--agent", "support", "--app", "acme")
    assert (silenced["ask"], silenced["layer"]) == (False, "agent.hitl_disabled")
    ok(cli("app", "set", "acme", "--hitl-required", "transfer_money", "--hitl-required", "wire"))
    required = explain(cli, "transfer_money", "--agent", "support", "--app", "acme")
    assert (required["ask"], required["layer"]) == (True, "app.hitl_required")
    ok(cli("app", "set", "acme", "--remove-hitl-required", "transfer_money"))
    assert sqlite_store.get_layer("app", "acme") == {
        "interrupt_overrides": {"transfer_money": True},
        "hitl_required": ["wire"],
    }
    assert explain(cli, "transfer_money", "--agent", "support", "--app", "acme")["ask"] is False
    ok(cli("app", "set", "acme", "--clear-hitl-required"))
    assert sqlite_store.get_layer("app", "acme") == {"interrupt_overrides": {"transfer_money": True}}


def test_app_hitl_disabled_and_info(cli: Cli, sqlite_store: SQLiteStore) -> None:
    ok(cli("tool", "set", "delete_db", "--requires-approval"))
    ok(cli("app", "set", "dev", "--hitl-disabled", "--interrupt-override", "delete_db"))
    dev = explain(cli, "delete_db", "--app", "dev")
    assert (dev["ask"], dev["layer"]) == (False, "app.hitl_disabled")
    info = ok(cli("app", "info", "dev")).stdout
    assert "hitl_disabled: true" in info
    assert "delete_db: on" in info
    assert json.loads(ok(cli("app", "info", "dev", "--json")).stdout) == sqlite_store.get_layer("app", "dev")
    ok(cli("app", "delete", "dev"))
    assert explain(cli, "delete_db", "--app", "dev")["ask"] is True


def test_layer_changes_are_audited_with_the_acting_user(cli: Cli, sqlite_store: SQLiteStore) -> None:
    ok(cli("agent", "set", "support", "--hitl-disabled", "--as", "carol"))
    ok(cli("agent", "delete", "support", "--as", "dave"))
    entries = [(e.action, e.actor, e.channel, e.data.get("name")) for e in sqlite_store.audit_entries()]
    assert entries == [("rules.set", "carol", "cli", "support"), ("rules.deleted", "dave", "cli", "support")]
