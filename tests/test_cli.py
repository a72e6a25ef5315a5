"""The CLI's request, audit, config and group commands, against a real SQLite file."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from signoff import Approve, Gate, Pending, Request, Respond, RuleSet, Scope, ToolCall
from signoff.cli import app
from signoff.store import SQLiteStore, Store
from tests.conftest import url_for

RULES = RuleSet.from_dict(
    {
        "tools": {
            "delete_db": {
                "requires_approval": True,
                "allowed_decisions": ["approve", "reject"],
                "approvers": ["alice"],
                "redact": ["password"],
            },
            "send_email": {"requires_approval": True, "approvers": ["group:ops"]},
            "count_things": {"requires_approval": True},
        }
    }
)
EMAIL_SCHEMA = {
    "type": "object",
    "properties": {
        "to": {"type": "string"},
        "count": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "note": {"type": "string"},
    },
    "required": ["to", "count"],
    "additionalProperties": False,
}

Cli = Callable[..., Result]


@pytest.fixture
def cli(sqlite_path: Path) -> Cli:
    runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None})

    def run(*args: str) -> Result:
        return runner.invoke(app, ["--db", str(sqlite_path), *args])

    return run


def submit(
    store: Store,
    tool: str,
    args: dict[str, Any],
    *,
    rules: RuleSet = RULES,
    schema: dict[str, Any] | None = None,
    call_id: str = "call-1",
    thread: str = "t1",
) -> Request:
    found = Gate(store, rules=rules).submit(
        ToolCall(name=tool, args=args, id=call_id, schema=schema), Scope(thread_id=thread, agent="bot")
    )
    assert isinstance(found, Pending)
    return found.request


def actions(store: SQLiteStore, request_id: str) -> list[tuple[str, str, str]]:
    return [(e.action, e.actor, e.channel) for e in store.audit_entries(request_id=request_id)]


def assert_clean_error(result: Result, code: int, *fragments: str) -> None:
    assert result.exit_code == code, result.output
    assert result.stderr.startswith("Error: "), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in result.stderr


# -- pending and show -----------------------------------------------------------------------------


def test_pending_shows_only_what_the_user_may_decide(cli: Cli, sqlite_store: SQLiteStore) -> None:
    delete = submit(sqlite_store, "delete_db", {"target": "users", "password": "hunter2"}, call_id="c1")
    email = submit(sqlite_store, "send_email", {"to": "a@example.com", "count": 1}, call_id="c2")
    sqlite_store.add_group_member("ops", "bob", actor="admin")

    def ids(*args: str) -> list[str]:
        result = cli("pending", "--json", *args)
        assert result.exit_code == 0, result.output
        return [item["id"] for item in json.loads(result.stdout)]

    assert ids("--as", "alice") == [delete.id]
    assert ids("--as", "bob") == [email.id]
    assert ids("--as", "mallory") == []
    assert ids("--as", "bob", "--tool", "delete_db") == []
    table = cli("pending", "--as", "alice")
    assert table.exit_code == 0
    assert delete.id in table.stdout
    assert "delete_db" in table.stdout
    assert "alice" in table.stdout
    assert "hunter2" not in table.stdout


def test_show_is_for_approvers_only_and_refusals_are_audited(cli: Cli, sqlite_store: SQLiteStore) -> None:
    request = submit(sqlite_store, "delete_db", {"target": "users", "password": "hunter2"})
    refused = cli("show", request.id, "--as", "mallory")
    assert_clean_error(refused, 1, "mallory is not an approver")
    assert "hunter2" not in refused.output
    assert actions(sqlite_store, request.id)[-1] == ("request.view_refused", "mallory", "cli")
    anyone = submit(sqlite_store, "count_things", {"n": 1}, call_id="c9")
    assert cli("show", anyone.id, "--as", "mallory").exit_code == 0


def test_pending_filters_by_thread_and_agent(cli: Cli, sqlite_store: SQLiteStore) -> None:
    first = submit(sqlite_store, "count_things", {"n": 1}, thread="run-a")
    second = submit(sqlite_store, "count_things", {"n": 1}, thread="run-b")
    listed = json.loads(cli("pending", "--json", "--thread", "run-b").stdout)
    assert [item["id"] for item in listed] == [second.id]
    assert {item["id"] for item in json.loads(cli("pending", "--json", "--agent", "bot").stdout)} == {
        first.id,
        second.id,
    }
    assert json.loads(cli("pending", "--json", "--agent", "other").stdout) == []


def test_show_redacts_and_includes_decisions_execution_and_audit(cli: Cli, sqlite_store: SQLiteStore) -> None:
    request = submit(sqlite_store, "delete_db", {"target": "users", "password": "hunter2"})
    assert cli("approve", request.id, "--as", "alice", "--comment", "fine").exit_code == 0
    result = cli("show", request.id, "--json", "--as", "alice")
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert shown["request"]["status"] == "approved"
    assert shown["request"]["args"] == {"target": "users", "password": "***"}
    assert [(d["type"], d["actor"], d["channel"], d["comment"]) for d in shown["decisions"]] == [
        ("approve", "alice", "cli", "fine")
    ]
    assert shown["execution"] is None
    assert [entry["action"] for entry in shown["audit"]] == ["request.created", "request.decided"]
    human = cli("show", request.id, "--as", "alice")
    assert human.exit_code == 0
    assert "hunter2" not in result.stdout + human.stdout
    assert "request.decided" in human.stdout
    assert "approved" in human.stdout


def test_unknown_request_is_one_clear_line(cli: Cli) -> None:
    for command in (
        ["show", "req_nope"],
        ["approve", "req_nope"],
        ["cancel", "req_nope"],
        ["rerun", "req_nope"],
    ):
        assert_clean_error(cli(*command), 1, "req_nope")


# -- decisions ------------------------------------------------------------------------------------


def test_approve_changes_status_and_audit(cli: Cli, sqlite_store: SQLiteStore) -> None:
    request = submit(sqlite_store, "delete_db", {"target": "users", "password": "x"})
    result = cli("approve", request.id, "--as", "alice")
    assert result.exit_code == 0, result.output
    assert "approved" in result.stdout
    assert "original arguments" in result.stdout
    stored = sqlite_store.get_request(request.id)
    assert stored.status == "approved"
    assert stored.decision is not None
    assert (stored.decision.actor, stored.decision.channel) == (
        "alice",
        "cli",
    )
    assert ("request.decided", "alice", "cli") in actions(sqlite_store, request.id)


def test_reject_prints_what_the_model_is_told(cli: Cli, sqlite_store: SQLiteStore) -> None:
    request = submit(sqlite_store, "delete_db", {"target": "users", "password": "x"})
    result = cli("reject", request.id, "--as", "alice", "--message", "Not on a Friday.")
    assert result.exit_code == 0, result.output
    assert (
        "Tool execution for 'delete_db' was rejected by the user. With user feedback: Not on a Friday."
        in result.stdout
    )
    assert sqlite_store.get_request(request.id).status == "rejected"


def test_respond_with_message_and_with_value(cli: Cli, sqlite_store: SQLiteStore) -> None:
    first = submit(sqlite_store, "count_things", {"n": 1}, call_id="c1")
    second = submit(sqlite_store, "count_things", {"n": 2}, call_id="c2")
    result = cli("respond", first.id, "--message", "There are 7.")
    assert result.exit_code == 0, result.output
    assert "There are 7." in result.stdout
    assert cli("respond", second.id, "--value", '{"count": 7}').exit_code == 0
    decided = sqlite_store.get_request(second.id)
    assert decided.status == "responded"
    assert decided.decision is not None
    assert decided.decision.decision == Respond(value={"count": 7})


def test_respond_needs_an_answer_and_valid_json(cli: Cli, sqlite_store: SQLiteStore) -> None:
    request = submit(sqlite_store, "count_things", {"n": 1})
    assert_clean_error(cli("respond", request.id), 2, "--message")
    assert_clean_error(cli("respond", request.id, "--value", "{nope"), 2, "--value is not valid JSON")
    assert sqlite_store.get_request(request.id).status == "pending"


def test_wrong_approver_is_refused_and_audited(cli: Cli, sqlite_store: SQLiteStore) -> None:
    request = submit(sqlite_store, "delete_db", {"target": "users", "password": "x"})
    result = cli("approve", request.id, "--as", "mallory")
    assert_clean_error(result, 1, f"mallory is not an approver of request {request.id}")
    assert sqlite_store.get_request(request.id).status == "pending"
    assert ("decision.refused", "mallory", "cli") in actions(sqlite_store, request.id)


def test_group_approver_may_decide(cli: Cli, sqlite_store: SQLiteStore) -> None:
    request = submit(sqlite_store, "send_email", {"to": "a@example.com", "count": 1})
    assert_clean_error(cli("approve", request.id, "--as", "bob"), 1, "not an approver")
    assert cli("groups", "add", "ops", "bob").exit_code == 0
    assert cli("approve", request.id, "--as", "bob").exit_code == 0
    assert sqlite_store.get_request(request.id).status == "approved"


def test_second_decision_is_a_clear_error(cli: Cli, sqlite_store: SQLiteStore) -> None:
    request = submit(sqlite_store, "delete_db", {"target": "users", "password": "x"})
    assert cli("approve", request.id, "--as", "alice").exit_code == 0
    assert_clean_error(cli("reject", request.id, "--as", "alice"), 1, "already approved by alice")
    assert sqlite_store.get_request(request.id).status == "approved"


def test_quorum_needs_distinct_approvers(cli: Cli, sqlite_store: SQLiteStore) -> None:
    four_eyes = RuleSet.from_dict({"tools": {"pay": {"requires_approval": True, "quorum": 2}}})
    request = submit(sqlite_store, "pay", {"amount": 5}, rules=four_eyes)
    first = cli("approve", request.id, "--as", "alice")
    assert first.exit_code == 0, first.output
    assert "Still pending: 1 of 2 approvals (alice)." in first.stdout
    assert_clean_error(cli("approve", request.id, "--as", "alice"), 1, "alice has already approved")
    assert sqlite_store.get_request(request.id).status == "pending"
    assert cli("approve", request.id, "--as", "bob").exit_code == 0
    assert sqlite_store.get_request(request.id).status == "approved"


def test_deciding_after_the_deadline_is_refused(cli: Cli, sqlite_store: SQLiteStore) -> None:
    quick = RuleSet.from_dict({"tools": {"count_things": {"requires_approval": True, "deadline": "20ms"}}})
    request = submit(sqlite_store, "count_things", {"n": 1}, rules=quick)
    time.sleep(0.05)
    assert_clean_error(cli("approve", request.id), 1, "expired")
    assert sqlite_store.get_request(request.id).status == "expired"


def test_decision_the_rule_does_not_allow_is_refused(cli: Cli, sqlite_store: SQLiteStore) -> None:
    request = submit(sqlite_store, "delete_db", {"target": "users", "password": "x"})
    result = cli("edit", request.id, "--as", "alice", "--set", "target=orders")
    assert_clean_error(result, 1, "'edit' is not allowed", "approve, reject")
    assert sqlite_store.get_request(request.id).status == "pending"


def test_cancel_tells_the_model(cli: Cli, sqlite_store: SQLiteStore) -> None:
    request = submit(sqlite_store, "count_things", {"n": 1})
    result = cli("cancel", request.id, "--reason", "Run aborted.", "--as", "ops")
    assert result.exit_code == 0, result.output
    assert "The approval request was cancelled. Reason: Run aborted." in result.stdout
    assert sqlite_store.get_request(request.id).status == "cancelled"
    assert ("request.cancelled", "ops", "cli") in actions(sqlite_store, request.id)


# -- edit -----------------------------------------------------------------------------------------


def email_request(store: SQLiteStore) -> Request:
    return submit(
        store,
        "count_things",
        {"to": "a@example.com", "count": 3, "tags": ["x"]},
        schema=EMAIL_SCHEMA,
    )


def test_edit_with_set_keeps_types(cli: Cli, sqlite_store: SQLiteStore) -> None:
    request = email_request(sqlite_store)
    result = cli(
        "edit", request.id, "--set", "to=123", "--set", "count=5", "--set", 'tags=["a", "b"]',
        "--set", "note=hello world", "--comment", "fewer",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    decided = sqlite_store.get_request(request.id)
    assert decided.status == "edited"
    assert decided.final_args == {"to": "123", "count": 5, "tags": ["a", "b"], "note": "hello world"}
    assert "were updated by the user to:" in result.stdout
    assert "With user feedback: fewer" in result.stdout


def test_edit_with_full_args(cli: Cli, sqlite_store: SQLiteStore) -> None:
    request = email_request(sqlite_store)
    result = cli("edit", request.id, "--args", '{"to": "b@example.com", "count": 1}')
    assert result.exit_code == 0, result.output
    assert sqlite_store.get_request(request.id).final_args == {"to": "b@example.com", "count": 1}
    entry = next(
        e for e in sqlite_store.audit_entries(request_id=request.id) if e.action == "request.decided"
    )
    assert entry.data["final_args"] == {"to": "b@example.com", "count": 1}


@pytest.mark.parametrize(
    ("arguments", "code", "message"),
    [
        (["--set", "count=lots"], 2, "'count' is a number"),
        (["--set", "count"], 2, "--set expects key=value"),
        (["--args", "{broken"], 2, "--args is not valid JSON"),
        (["--args", "[1, 2]"], 2, "--args must be a JSON object"),
        ([], 2, "either --args JSON or one or more --set"),
        (["--args", "{}", "--set", "count=1"], 2, "either --args JSON or one or more --set"),
        (["--set", 'count="five"'], 1, "count"),
        (["--set", "extra=1"], 1, "extra"),
    ],
)
def test_bad_edit_changes_nothing(
    cli: Cli, sqlite_store: SQLiteStore, arguments: list[str], code: int, message: str
) -> None:
    request = email_request(sqlite_store)
    assert_clean_error(cli("edit", request.id, *arguments), code, message)
    assert sqlite_store.get_request(request.id).status == "pending"
    assert sqlite_store.decisions(request.id) == []


# -- executions and expiry ------------------------------------------------------------------------


def test_rerun_resets_a_failed_execution(cli: Cli, sqlite_store: SQLiteStore) -> None:
    gate = Gate(sqlite_store, rules=RULES)
    call = ToolCall(name="count_things", args={"n": 1}, id="c1")
    request = submit(sqlite_store, "count_things", {"n": 1}, call_id="c1")
    assert_clean_error(cli("rerun", request.id), 1, "only in_doubt, failed or abandoned can be reset")
    sqlite_store.decide(request.id, Approve(), actor="alice")

    def broken(n: int) -> int:
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        gate.run(call, broken, Scope(thread_id="t1", agent="bot"))
    assert sqlite_store.get_execution(request.id).status == "failed"  # type: ignore[union-attr]
    result = cli("rerun", request.id, "--as", "carol")
    assert result.exit_code == 0, result.output
    assert "not_started" in result.stdout
    assert ("execution.reset", "carol", "cli") in actions(sqlite_store, request.id)
    reply = gate.run(call, lambda n: n + 1, Scope(thread_id="t1", agent="bot"))
    assert (reply.executed, reply.value) == (True, 2)


def test_sweep_expires_overdue_requests(cli: Cli, sqlite_store: SQLiteStore) -> None:
    quick = RuleSet.from_dict({"tools": {"count_things": {"requires_approval": True, "deadline": "50ms"}}})
    request = submit(sqlite_store, "count_things", {"n": 1}, rules=quick)
    time.sleep(0.1)
    result = cli("sweep")
    assert result.exit_code == 0, result.output
    assert "Expired 1 request(s)." in result.stdout
    assert request.id in result.stdout
    assert sqlite_store.get_request(request.id).status == "expired"
    assert "Expired 0 request(s)." in cli("sweep").stdout


# -- audit ----------------------------------------------------------------------------------------


def test_audit_verify_ok_then_broken(cli: Cli, sqlite_store: SQLiteStore, sqlite_path: Path) -> None:
    request = submit(sqlite_store, "count_things", {"n": 1})
    assert cli("approve", request.id).exit_code == 0
    ok = cli("audit", "verify")
    assert ok.exit_code == 0
    assert ok.stdout.strip() == "ok, 2 entries, 1 request"
    with sqlite3.connect(sqlite_path) as connection:
        connection.execute("DROP TRIGGER audit_log_no_update")
        connection.execute("""UPDATE audit_log SET data = '{"tool": "innocent"}' WHERE seq = 1""")
    broken = cli("audit", "verify")
    assert broken.exit_code == 1
    assert "entry 1: was edited" in broken.stdout
    report = cli("audit", "verify", "--json")
    assert report.exit_code == 1
    assert json.loads(report.stdout)["ok"] is False


def test_audit_anchor_then_verify_against_it(cli: Cli, sqlite_store: SQLiteStore, sqlite_path: Path) -> None:
    request = submit(sqlite_store, "count_things", {"n": 1})
    assert cli("approve", request.id).exit_code == 0
    anchored = cli("audit", "anchor")
    assert anchored.exit_code == 0, anchored.output
    anchor = anchored.stdout.strip()
    assert anchor == f"2:{list(sqlite_store.audit_entries())[-1].hash}"
    assert json.loads(cli("audit", "anchor", "--json").stdout)["anchor"] == anchor
    submit(sqlite_store, "count_things", {"n": 2}, call_id="c2")
    extended = cli("audit", "verify", "--anchor", anchor)
    assert extended.exit_code == 0, extended.output
    assert extended.stdout.strip() == "ok, 3 entries, 2 requests; it extends the anchor at entry 2"
    rewritten = cli("audit", "verify", "--anchor", "2:" + "0" * 64)
    assert rewritten.exit_code == 1
    assert "entry 2: does not match the anchor 2:000" in rewritten.stdout
    assert_clean_error(cli("audit", "verify", "--anchor", "2:nothex"), 2, "--anchor: not an audit anchor")


def test_audit_commands_on_a_dropped_log_say_so_without_a_traceback(
    cli: Cli, sqlite_store: SQLiteStore, sqlite_path: Path
) -> None:
    submit(sqlite_store, "count_things", {"n": 1})
    with sqlite3.connect(sqlite_path) as connection:
        connection.execute("DROP TABLE audit_log")
    verified = cli("audit", "verify")
    assert verified.exit_code == 1, verified.output
    assert "log: the table audit_log is missing: it was dropped, or never created" in verified.stdout
    assert "log: the trigger audit_log_no_update is missing" in verified.stdout
    assert "Traceback" not in verified.output
    assert_clean_error(
        cli("audit", "anchor"), 1, "cannot anchor the audit log: the table audit_log is missing"
    )


def test_audit_export_jsonl(cli: Cli, sqlite_store: SQLiteStore, tmp_path: Path) -> None:
    first = submit(sqlite_store, "count_things", {"n": 1}, call_id="c1")
    submit(sqlite_store, "count_things", {"n": 2}, call_id="c2")
    assert cli("reject", first.id, "--message", "no").exit_code == 0
    everything = cli("audit", "export")
    assert everything.exit_code == 0
    lines = [json.loads(line) for line in everything.stdout.splitlines()]
    assert lines == [entry.to_dict() for entry in sqlite_store.audit_entries()]
    assert len(lines) == 3
    out = tmp_path / "audit.jsonl"
    assert cli("audit", "export", "--out", str(out), "--request", first.id).exit_code == 0
    only_first = [json.loads(line) for line in out.read_text().splitlines()]
    assert [entry["action"] for entry in only_first] == ["request.created", "request.decided"]
    assert {entry["request_id"] for entry in only_first} == {first.id}
    assert_clean_error(cli("audit", "export", "--request", "req_nope"), 1, "req_nope")


# -- config and groups ----------------------------------------------------------------------------


def test_config_import_export_round_trip(cli: Cli, sqlite_store: SQLiteStore, tmp_path: Path) -> None:
    rules_file = tmp_path / "rules.yaml"
    rules_file.write_text(RULES.to_yaml() + "agents:\n  support:\n    interrupt_on: {ls: false}\n")
    result = cli("config", "import", str(rules_file))
    assert result.exit_code == 0, result.output
    assert "3 tools" in result.stdout
    assert "1 agents" in result.stdout
    assert sqlite_store.load_rules() == RuleSet.from_file(rules_file)
    exported = cli("config", "export")
    assert exported.exit_code == 0
    assert RuleSet.from_yaml(exported.stdout) == RuleSet.from_file(rules_file)
    out = tmp_path / "out.yaml"
    assert cli("config", "export", str(out)).exit_code == 0
    assert RuleSet.from_file(out) == RuleSet.from_file(rules_file)


def test_config_import_of_bad_rules_changes_nothing(
    cli: Cli, sqlite_store: SQLiteStore, tmp_path: Path
) -> None:
    sqlite_store.replace_rules(RULES, actor="admin")
    bad = tmp_path / "bad.yaml"
    bad.write_text("tools:\n  x: {requires_approval: maybe-not}\n")
    assert_clean_error(cli("config", "import", str(bad)), 1, "invalid rules")
    assert_clean_error(cli("config", "import", str(tmp_path / "missing.yaml")), 1, "cannot read rules file")
    assert sqlite_store.load_rules() == RULES


def test_groups_add_list_remove(cli: Cli, sqlite_store: SQLiteStore) -> None:
    assert cli("groups", "add", "ops", "bob").exit_code == 0
    assert cli("groups", "add", "group:ops", "carol").exit_code == 0
    assert sorted(json.loads(cli("groups", "list", "--json").stdout)["ops"]) == ["bob", "carol"]
    assert "group:ops" in cli("groups", "list").stdout
    assert cli("groups", "remove", "ops", "bob").exit_code == 0
    assert sqlite_store.group_members() == {"ops": ["carol"]}
    assert_clean_error(cli("groups", "remove", "ops", "bob"), 1, "bob is not in group ops")


# -- explain and the database option --------------------------------------------------------------


def test_explain_against_a_file_and_the_store(cli: Cli, sqlite_store: SQLiteStore, tmp_path: Path) -> None:
    rules_file = tmp_path / "rules.yaml"
    rules_file.write_text("tools:\n  deploy: {requires_approval: true, when: 'args.env == \"prod\"'}\n")
    prod = json.loads(
        cli("explain", "deploy", "--config", str(rules_file), "--args", '{"env": "prod"}', "--json").stdout
    )
    assert (prod["ask"], prod["layer"]) == (True, "tool")
    dev = json.loads(
        cli("explain", "deploy", "--config", str(rules_file), "--args", '{"env": "dev"}', "--json").stdout
    )
    assert (dev["ask"], dev["layer"], dev["allowed_decisions"]) == (False, "when", [])
    stored = json.loads(cli("explain", "deploy", "--json").stdout)
    assert (stored["ask"], stored["layer"]) == (False, "default")
    human = cli("explain", "deploy", "--config", str(rules_file), "--args", '{"env": "prod"}')
    assert "ASK" in human.stdout
    assert "decided by: tool" in human.stdout
    assert "is true" in human.stdout
    assert_clean_error(cli("explain", "deploy", "--args", "{bad"), 2, "--args is not valid JSON")


@pytest.mark.parametrize("form", ["plain", "url", "env"])
def test_database_option_forms(sqlite_store: SQLiteStore, sqlite_path: Path, form: str) -> None:
    request = submit(sqlite_store, "count_things", {"n": 1})
    runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": str(sqlite_path) if form == "env" else None})
    db = {"plain": ["--db", str(sqlite_path)], "url": ["--db", f"sqlite:///{sqlite_path}"], "env": []}[form]
    assert str(sqlite_path).startswith("/")
    result = runner.invoke(app, [*db, "pending", "--json"])
    assert result.exit_code == 0, result.output
    assert [item["id"] for item in json.loads(result.stdout)] == [request.id]


def test_decide_and_verify_on_both_backends(store: Store) -> None:
    request = submit(store, "count_things", {"n": 1})
    runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": url_for(store)})
    result = runner.invoke(app, ["reject", request.id, "--as", "alice", "--message", "later"])
    assert result.exit_code == 0, result.output
    assert store.get_request(request.id).status == "rejected"
    verified = runner.invoke(app, ["audit", "verify"])
    assert verified.exit_code == 0
    assert verified.stdout.strip() == "ok, 2 entries, 1 request"


def test_bad_database_url_is_a_clear_error() -> None:
    result = CliRunner().invoke(app, ["--db", "mysql://nope", "pending"])
    assert_clean_error(result, 1, "unknown database url")
