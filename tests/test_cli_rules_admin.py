"""`signoff config diff/import --if-version/history/revert`, `signoff audit list/export` with
filters, `audit verify --file` and `explain --rules`: on the database and through a server
(the same operations, audited the same way)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from signoff.cli import app
from signoff.store import Store

from .conftest import url_for
from .live import LiveServer
from .test_cli_remote import cli_for

Cli = Callable[..., Result]
RULES_FILE = """\
tools:
  send_email: {requires_approval: true, approvers: [bob], deadline: 2h}
agents:
  support-bot: {interrupt_on: {ls: false}}
"""


@pytest.fixture(params=["local", "remote"])
def admin(request: pytest.FixtureRequest, store: Store) -> Iterator[Cli]:
    """An admin's CLI: on the database (as `root`), or through a server with root's token."""
    if request.param == "local":
        runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None, "SIGNOFF_URL": None})

        def run(*args: str) -> Result:
            as_root = ["--as", "root"] if args[:2] in (("config", "import"), ("config", "revert")) else []
            return runner.invoke(app, ["--db", url_for(store), *args, *as_root])

        yield run
        return
    with LiveServer(store) as server:
        yield cli_for(server, server.user("root", "admin"))


def ok(result: Result) -> Result:
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    return result


@pytest.fixture
def rules_file(tmp_path: Path) -> Path:
    path = tmp_path / "rules.yaml"
    path.write_text(RULES_FILE, encoding="utf-8")
    return path


def test_diff_then_import_at_that_version_then_history_and_revert(
    admin: Cli, store: Store, rules_file: Path
) -> None:
    store.set_layer("tool", "send_email", {"requires_approval": True, "approvers": ["alice"]}, actor="root")
    shown = ok(admin("config", "diff", str(rules_file), "--tool", "send_email", "--agent", "support-bot"))
    assert "~ tool send_email (changed)" in shown.stdout
    assert "+ agent support-bot (added)" in shown.stdout
    assert "- - alice" in shown.stdout and "+ - bob" in shown.stdout
    assert "would ask alice (approve, edit, reject, respond), 1d, then reject." in shown.stdout
    assert "would ask bob (approve, edit, reject, respond), 2h, then reject." in shown.stdout
    assert f"signoff config import {rules_file} --if-version 1" in shown.stdout
    preview = json.loads(ok(admin("config", "diff", str(rules_file), "--json")).stdout)
    assert preview["version"] == 1 and preview["sample"] is None
    assert store.rules_version() == 1  # nothing was applied

    store.set_layer("tool", "deploy", {"requires_approval": True}, actor="root")  # meanwhile
    stale = admin("config", "import", str(rules_file), "--if-version", "1")
    assert stale.exit_code == 1 and "the rules changed since version 1" in stale.stderr
    assert store.get_layer("tool", "send_email") == {"requires_approval": True, "approvers": ["alice"]}
    ok(admin("config", "import", str(rules_file), "--if-version", "2"))
    assert store.get_layer("agent", "support-bot") == {"interrupt_on": {"ls": False}}

    history = json.loads(ok(admin("config", "history", "--json")).stdout)
    assert [item["action"] for item in history] == ["rules.imported", "rules.set", "rules.set"]
    assert all(item["actor"] == "root" for item in history)
    text = ok(admin("config", "history", "--limit", "1")).stdout
    assert f"#{history[0]['seq']}" in text and "rules.imported" in text
    assert f"Older: signoff config history --before {history[0]['seq']}" in text

    reverted = ok(admin("config", "revert", str(history[0]["seq"])))
    assert f"Reverted change {history[0]['seq']}" in reverted.stdout
    assert store.get_layer("tool", "send_email") == {"requires_approval": True, "approvers": ["alice"]}
    assert store.get_layer("agent", "support-bot") is None
    refused = admin("config", "revert", str(history[0]["seq"]))  # its revert changed those entries since
    assert refused.exit_code == 1 and "changed again after change" in refused.stderr
    [revert] = store.rule_history(limit=1)
    assert (revert.action, revert.actor, revert.reverted) == ("rules.reverted", "root", history[0]["seq"])


def test_audit_list_and_export_filter_and_an_export_verifies(
    admin: Cli, store: Store, tmp_path: Path
) -> None:
    store.set_layer("tool", "send_email", {"requires_approval": True}, actor="alice")
    store.record("access.refused", actor="mallory", channel="api", data={"path": "/admin"})
    store.delete_layer("tool", "send_email", actor="bob")

    listed = json.loads(ok(admin("audit", "list", "--kind", "rules", "--json", "--limit", "1")).stdout)
    assert [item["action"] for item in listed["items"]] == ["rules.deleted"]
    older = ok(admin("audit", "list", "--kind", "rules", "--json", "--before", str(listed["next_before"])))
    assert [item["actor"] for item in json.loads(older.stdout)["items"]] == ["alice"]
    shown = ok(admin("audit", "list", "--actor", "mallory")).stdout
    assert "access.refused" in shown and "rules.set" not in shown
    bad = admin("audit", "list", "--since", "someday")
    assert bad.exit_code == 2 and "--since: 'someday' is not a date or time" in bad.stderr

    exported = ok(admin("audit", "export", "--format", "csv", "--kind", "rules")).stdout
    rows = list(csv.DictReader(io.StringIO(exported)))
    assert [(row["action"], row["actor"]) for row in rows] == [
        ("rules.set", "alice"),
        ("rules.deleted", "bob"),
    ]
    assert json.loads(rows[1]["data"])["before"] == {"requires_approval": True}

    whole = tmp_path / "audit.jsonl"
    ok(admin("audit", "export", "--out", str(whole)))
    checked = ok(admin("audit", "verify", "--file", str(whole)))
    assert checked.stdout.startswith("ok, ") and f"every hash and link in {whole}" in checked.stdout
    lines = whole.read_text(encoding="utf-8").splitlines()
    edited = json.loads(lines[1])
    edited["actor"] = "someone-else"
    (tmp_path / "edited.jsonl").write_text("\n".join([lines[0], json.dumps(edited), *lines[2:]]) + "\n")
    broken = admin("audit", "verify", "--file", str(tmp_path / "edited.jsonl"))
    assert broken.exit_code == 1 and "was edited: its hash does not match its contents" in broken.stdout
    (tmp_path / "cut.jsonl").write_text("\n".join([lines[0], *lines[2:]]) + "\n")
    cut = admin("audit", "verify", "--file", str(tmp_path / "cut.jsonl"))
    assert cut.exit_code == 1 and "entries 2 are missing (deleted)" in cut.stdout


def test_explain_against_a_rules_file(admin: Cli, rules_file: Path) -> None:
    explained = json.loads(ok(admin("explain", "send_email", "--rules", str(rules_file), "--json")).stdout)
    assert (explained["ask"], explained["approvers"]) == (True, ["bob"])


def test_a_diff_needs_a_tool_for_a_sample_and_a_readable_file(admin: Cli, tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("tools: {x: {allowed_decisions: [nah]}}\n", encoding="utf-8")
    bad = admin("config", "diff", str(tmp_path / "bad.yaml"))
    assert bad.exit_code == 1 and "tools.x.allowed_decisions.0" in bad.stderr
    (tmp_path / "ok.yaml").write_text("{}\n", encoding="utf-8")
    alone = admin("config", "diff", str(tmp_path / "ok.yaml"), "--agent", "bot")
    assert alone.exit_code == 2 and "give --tool too" in alone.stderr
