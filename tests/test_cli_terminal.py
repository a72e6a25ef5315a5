"""The CLI as a person meets it in a terminal: narrow widths, help texts, pipes that close, a
port in use, times, and characters a person cannot see."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
import pytest
import typer
from typer.testing import CliRunner, Result

from signoff import Approve, Gate, Pending, Request, RuleSet, Scope, ToolCall
from signoff.cli import app
from signoff.store import SQLiteStore

from .live import free_port

RULES = RuleSet.from_dict(
    {
        "tools": {
            "send_email": {
                "requires_approval": True,
                "description": "Mail {to}\nabout {subject}",
                "approvers": ["alice", "group:mail-approvers"],
            },
            "quick": {"requires_approval": True, "deadline": "1s"},
        },
        "agents": {"support-bot": {"interrupt_on": {"send_email": True}}},
    }
)
SPOOF = "/home/user/\u202etxt.hsab_ekam"
"""Reads as `/home/user/make_bash.txt` when rendered as it is."""
ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")
HOUSE_TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")

Cli = Callable[..., Result]


def cli_at(sqlite_path: Path, columns: int) -> Cli:
    runner = CliRunner(env={"COLUMNS": str(columns), "SIGNOFF_DB": None})

    def run(*args: str) -> Result:
        return runner.invoke(app, ["--db", str(sqlite_path), *args])

    return run


def ask(
    store: SQLiteStore, args: dict[str, Any], *, call_id: str = "c1", tool: str = "send_email"
) -> Request:
    found = Gate(store, rules=RULES).submit(
        ToolCall(name=tool, args=args, id=call_id), Scope(thread_id="run-1", agent="support-bot", app="acme")
    )
    assert isinstance(found, Pending)
    return found.request


def signoff_process(*args: str, **popen: Any) -> subprocess.Popen[str]:
    env = {**os.environ, "COLUMNS": "200", "PYTHONUNBUFFERED": "1"}
    env.pop("SIGNOFF_DB", None)
    return subprocess.Popen([sys.executable, "-m", "signoff.cli", *args], env=env, text=True, **popen)


# -- signoff pending at 80 columns and narrower ------------------------------------------------


@pytest.mark.parametrize("columns", [200, 80, 60, 40])
def test_pending_never_breaks_an_id_over_lines(
    sqlite_path: Path, sqlite_store: SQLiteStore, columns: int
) -> None:
    requests = [
        ask(sqlite_store, {"to": f"someone-{n}@example.com", "subject": "Quarterly numbers"}, call_id=f"c{n}")
        for n in range(3)
    ]
    result = cli_at(sqlite_path, columns)("pending", "--as", "alice")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    for request in requests:
        [line] = [line for line in lines if request.id in line]  # whole, on one line, once
        assert line.split()[0] == request.id, line  # first on its line: easy to double-click
    words = " ".join(result.stdout.split())  # wrapped or not
    for fact in (
        "send_email",
        "Mail someone-0@example.com",
        "support-bot / acme",
        "alice, group:mail-approvers",
    ):
        assert fact in words
    assert "left" in result.stdout  # the deadline
    if columns >= 80:
        ids = {request.id for request in requests}
        assert all(len(line) <= columns for line in lines if not any(i in line for i in ids))


def test_pending_is_a_table_when_it_fits(sqlite_path: Path, sqlite_store: SQLiteStore) -> None:
    request = ask(sqlite_store, {"to": "a@example.com", "subject": "Hi"})
    wide = cli_at(sqlite_path, 200)("pending", "--as", "alice").stdout.splitlines()
    assert wide[1].split() == ["id", "tool", "description", "agent", "/", "app", "deadline", "approvers"]
    assert wide[2].startswith(f"{request.id}  send_email  Mail a@example.com ")


# -- help texts ----------------------------------------------------------------------------------


def every_command(
    group: typer.core.TyperGroup, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    context = typer.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        assert command is not None, name
        yield (*path, name), command
        if isinstance(command, typer.core.TyperGroup):
            yield from every_command(command, (*path, name))


COMMANDS = list(every_command(typer.main.get_group(app)))


@pytest.mark.parametrize("columns", [80, 60])
def test_no_help_text_cuts_an_option_name(columns: int) -> None:
    runner = CliRunner(env={"COLUMNS": str(columns)})
    assert any(path == ("tool", "set") for path, _ in COMMANDS)
    for path, command in [((), typer.main.get_group(app)), *COMMANDS]:
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        names = [name for param in command.params for name in (*param.opts, *param.secondary_opts)]
        for name in names:
            if name.startswith("-"):
                assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", result.stdout), (path, name)
        for name in getattr(command, "commands", {}):
            assert re.search(rf"^  {re.escape(name)}(?![\w-])", result.stdout, flags=re.MULTILINE), (
                path,
                name,
            )


# -- pipes and ports -----------------------------------------------------------------------------


@pytest.mark.slow
def test_a_closed_pipe_ends_the_output_quietly(sqlite_path: Path, sqlite_store: SQLiteStore) -> None:
    for n in range(300):
        sqlite_store.add_group_member("ops", f"user-{n}", actor="admin")  # 300 audit entries
    process = signoff_process(
        "--db", str(sqlite_path), "audit", "export", stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout is not None and process.stderr is not None
    first = json.loads(process.stdout.readline())  # `| head -n 1`
    assert first["seq"] == 1
    process.stdout.close()
    assert process.wait(30) == 141  # 128 + SIGPIPE, as `yes | head` under `set -o pipefail`
    assert process.stderr.read() == ""
    process.stderr.close()


@pytest.mark.slow
def test_a_port_in_use_is_one_clear_error(tmp_path: Path) -> None:
    port = free_port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "signoff.cli",
                "serve",
                "--db",
                str(tmp_path / "s.db"),
                "--port",
                str(port),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "COLUMNS": "200"},
        )
    assert done.returncode == 1, done
    assert done.stdout == ""  # not "signoff is serving on …", no first-start link
    [line] = done.stderr.splitlines()
    assert line.startswith(f"Error: port {port} on 127.0.0.1 is already in use"), line
    assert "--port" in line
    assert "Errno" not in line
    suggested = int(re.findall(r"--port (\d+)", line)[0])
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", suggested))  # the port it suggests is free
    assert not (tmp_path / "s.db").exists()  # nothing created either


def test_a_port_out_of_range_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["serve", "--db", str(tmp_path / "s.db"), "--port", "70000"])
    assert result.exit_code == 2
    assert "--port" in result.stderr and "65535" in result.stderr
    assert not (tmp_path / "s.db").exists()


# -- times ---------------------------------------------------------------------------------------


def test_times_are_written_one_way(sqlite_path: Path, sqlite_store: SQLiteStore) -> None:
    request = ask(sqlite_store, {"to": "a@example.com", "subject": "Hi"})
    sqlite_store.decide(request.id, Approve(comment="fine"), actor="alice")
    gate = Gate(sqlite_store, rules=RULES)
    gate.run(
        ToolCall(name="send_email", args={"to": "a@example.com", "subject": "Hi"}, id="c1"),
        lambda **_: "sent",
        Scope(thread_id="run-1", agent="support-bot", app="acme"),
    )
    shown = cli_at(sqlite_path, 200)("show", request.id, "--as", "alice")
    assert shown.exit_code == 0, shown.output
    assert not ISO.search(shown.stdout), shown.stdout
    created = sqlite_store.get_request(request.id).created_at.strftime("%Y-%m-%d %H:%M:%S UTC")
    assert f"created: {created}" in shown.stdout
    assert len(HOUSE_TIME.findall(shown.stdout)) >= 6  # created, deadline x2, the decision, execution, audit


def test_an_expired_request_says_when_in_the_same_format(
    sqlite_path: Path, sqlite_store: SQLiteStore
) -> None:
    request = ask(sqlite_store, {}, tool="quick")
    time.sleep(max(0.0, (request.deadline - datetime.now(UTC)).total_seconds()) + 0.05)
    refused = cli_at(sqlite_path, 200)("approve", request.id)
    assert refused.exit_code == 1
    assert re.fullmatch(rf"Error: request {request.id} expired at {HOUSE_TIME.pattern}\n", refused.stderr)


# -- characters a person cannot see --------------------------------------------------------------


def test_hidden_characters_are_shown_escaped_with_a_warning(
    sqlite_path: Path, sqlite_store: SQLiteStore
) -> None:
    request = ask(sqlite_store, {"to": SPOOF, "subject": "zero\u200bwidth", "cc": ["a\nApproved by admin"]})
    cli = cli_at(sqlite_path, 200)
    for args in (("pending", "--as", "alice"), ("show", request.id, "--as", "alice")):
        result = cli(*args)
        assert result.exit_code == 0, result.output
        assert "\u202e" not in result.stdout and "\u200b" not in result.stdout
        assert "/home/user/\\u202etxt.hsab_ekam" in result.stdout
        assert "Warning: characters a person cannot see, shown escaped: U+202E RIGHT-TO-LEFT OVERRIDE" in (
            result.stdout
        )
    shown = cli("show", request.id, "--as", "alice").stdout
    assert "zero\\u200bwidth" in shown
    assert re.search(r"U\+200B ZERO WIDTH SPACE \(in [^)]*argument 'subject'", shown)
    assert re.search(r"U\+000A LINE FEED \(in [^)]*argument 'cc'", shown)
    assert "Approved by admin" not in shown.replace(
        'a\\nApproved by admin"', ""
    )  # never on a line of its own
    assert "argument 'to'" in shown
    assert "Mail /home/user/\\u202etxt.hsab_ekam" in shown  # the description quotes the arg, escaped


def test_json_output_escapes_them_and_keeps_the_values(sqlite_path: Path, sqlite_store: SQLiteStore) -> None:
    request = ask(sqlite_store, {"to": SPOOF, "subject": "Hi"})
    result = cli_at(sqlite_path, 200)("show", request.id, "--json", "--as", "alice")
    assert result.exit_code == 0, result.output
    assert "\u202e" not in result.stdout
    assert "\\u202e" in result.stdout
    assert json.loads(result.stdout)["request"]["args"]["to"] == SPOOF


def test_a_decision_and_explain_show_them_escaped(sqlite_path: Path, sqlite_store: SQLiteStore) -> None:
    request = ask(sqlite_store, {"to": "a@example.com", "subject": "Hi"})
    cli = cli_at(sqlite_path, 200)
    rejected = cli("reject", request.id, "--as", "alice", "--message", "no\u202e way")
    assert rejected.exit_code == 0, rejected.output
    assert "\u202e" not in rejected.stdout
    assert "no\\u202e way" in rejected.stdout
    assert "Warning: characters a person cannot see" in rejected.stdout
    explained = cli("explain", "send\u200b_email", "--agent", "support-bot")
    assert explained.exit_code == 0, explained.output
    assert "\u200b" not in explained.stdout
    assert "send\\u200b_email" in explained.stdout
    assert "U+200B ZERO WIDTH SPACE (in the tool" in explained.stdout


def test_plain_text_is_left_alone(sqlite_path: Path, sqlite_store: SQLiteStore) -> None:
    request = ask(sqlite_store, {"to": "zoë@example.com", "subject": "Café [bold]menu[/bold] 🍰"})
    shown = cli_at(sqlite_path, 200)("show", request.id, "--as", "alice").stdout
    assert "subject: Café [bold]menu[/bold] 🍰" in shown  # no markup taken from data, nothing escaped
    assert "Warning" not in shown
