"""`signoff demo`: the scripted agent, decided by --auto, by keystrokes, and from a second process."""

from __future__ import annotations

import getpass
import os
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

import pytest
from typer.testing import CliRunner

from signoff import RuleSet
from signoff.cli import app
from signoff.demo import rules_yaml
from signoff.store import SQLiteStore

APPROVED_TEXT = "Deleted 3 rows from sessions (prod)."
EDITED_TEXT = "The parameters for tool 'send_email' were updated by the user to:"
REJECTED_TEXT = "Tool execution for 'send_email' was rejected by the user."
RESPONDED_TEXT = "No need to ask finance: the Q4 marketing budget is 250,000 EUR."
REQUEST_ID = re.compile(r"req_[0-9A-Z]{26}")
ENV = {**os.environ, "COLUMNS": "200", "PYTHONUNBUFFERED": "1"}
ENV.pop("SIGNOFF_DB", None)


def signoff(*args: str) -> list[str]:
    return [sys.executable, "-m", "signoff.cli", *args]


def statuses(store: SQLiteStore, thread: str) -> dict[str, str]:
    """tool_call_id → status, for the run's requests (oldest first)."""
    requests = reversed(store.list_requests(thread_id=thread))
    return {request.tool_call_id: request.status.value for request in requests}


def test_packaged_rules_load() -> None:
    rules = RuleSet.from_yaml(rules_yaml())
    assert rules.tools["search"].requires_approval is False
    assert rules.tools["delete_records"].redact == ["db_url"]
    assert rules.tools["send_email"].allowed_decisions == ["approve", "edit", "reject", "respond"]


def test_auto_shows_the_four_model_facing_texts(sqlite_path: Path) -> None:
    runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None})
    result = runner.invoke(app, ["--db", str(sqlite_path), "demo", "--auto", "--thread", "ci"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    for text in (APPROVED_TEXT, EDITED_TEXT, RESPONDED_TEXT, "Audit chain verified: ok"):
        assert text in out
    assert f"{REJECTED_TEXT} With user feedback: Nothing goes to the press before the earnings call." in out
    assert 'no approval needed (when: when `args.env == "prod"` is false)' in out
    assert "s3cret" not in out
    assert "hunter2" not in out
    with SQLiteStore(sqlite_path) as store:
        assert list(statuses(store, "ci").values()) == ["approved", "edited", "rejected", "responded"]
        requests = store.list_requests(thread_id="ci")
        assert {(r.decision.actor, r.decision.channel) for r in requests if r.decision} == {("demo", "demo")}
        edited = next(r for r in requests if r.status == "edited")
        assert edited.final_args is not None
        assert edited.final_args["to"] == "leads@example.com"
        assert store.verify_audit().ok


def test_same_thread_replays_without_asking_or_running_again(sqlite_path: Path) -> None:
    runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None})
    first = runner.invoke(app, ["--db", str(sqlite_path), "demo", "--auto", "--thread", "again"])
    assert first.exit_code == 0, first.output
    second = runner.invoke(app, ["--db", str(sqlite_path), "demo", "--auto", "--thread", "again"])
    assert second.exit_code == 0, second.output
    assert second.stdout.count("decided in an earlier run") == 4
    assert "🔔 approval needed" not in second.stdout
    assert second.stdout.count("it does not run again") == 2
    assert first.stdout.count("⚙ delete_records runs") == 2
    assert first.stdout.count("⚙ send_email runs") == 1
    assert second.stdout.count("⚙ delete_records runs") == 1  # staging: not gated, so it runs again
    assert second.stdout.count("⚙ send_email runs") == 0
    for text in (APPROVED_TEXT, EDITED_TEXT, REJECTED_TEXT, RESPONDED_TEXT):
        assert text in second.stdout
    with SQLiteStore(sqlite_path) as store:
        requests = store.list_requests(thread_id="again")
        assert len(requests) == 4
        executed = [store.get_execution(r.id) for r in requests if r.status in ("approved", "edited")]
        assert [(e.status.value, e.attempts) for e in executed if e] == [("succeeded", 1)] * 2


@pytest.mark.parametrize("ui", ["rich", "simple"])
def test_interactive_keystrokes_including_bad_json(sqlite_path: Path, ui: str) -> None:
    keystrokes = "\n".join(
        [
            "y",  # delete_records in prod: approve
            "m",  # send_email to all-staff: modify
            "leads@example.com",  # to (a string: taken as typed)
            "[oops",  # cc: not JSON, asked again
            '["cfo@example.com", "ceo@example.com"]',  # cc
            "",  # subject: kept
            "",  # body: kept
            "n",  # send_email to the press: reject
            "Not before the call.",
            "r",  # send_email to finance: respond
            "It is 250k.",
        ]
    )
    done = subprocess.run(
        signoff("--db", str(sqlite_path), "demo", "--ui", ui, "--thread", "keys"),
        input=keystrokes + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        env=ENV,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Invalid JSON, please try again." in done.stdout
    assert f"{REJECTED_TEXT} With user feedback: Not before the call." in done.stdout
    assert "It is 250k." in done.stdout
    with SQLiteStore(sqlite_path) as store:
        assert list(statuses(store, "keys").values()) == ["approved", "edited", "rejected", "responded"]
        edited = next(r for r in store.list_requests(thread_id="keys") if r.status == "edited")
        assert edited.final_args == {
            "to": "leads@example.com",
            "cc": ["cfo@example.com", "ceo@example.com"],
            "subject": "Q3 numbers",
            "body": "Revenue: 4.2M EUR, up 12% on Q2.",
        }
        assert edited.decision is not None
        assert (edited.decision.actor, edited.decision.channel) == (getpass.getuser(), "console")


def _lines(stream: IO[str], into: queue.Queue[str]) -> None:
    for line in stream:
        into.put(line)


def _wait_for(
    lines: queue.Queue[str], seen: list[str], pattern: re.Pattern[str], timeout: float
) -> re.Match[str]:
    give_up = time.monotonic() + timeout
    while time.monotonic() < give_up:
        try:
            line = lines.get(timeout=0.1)
        except queue.Empty:
            continue
        seen.append(line)
        found = pattern.search(line)
        if found:
            return found
    raise AssertionError(f"{pattern.pattern!r} never appeared in:\n{''.join(seen)}")


def test_a_second_process_decides_while_the_demo_waits(sqlite_path: Path) -> None:
    demo = subprocess.Popen(
        signoff("--db", str(sqlite_path), "demo", "--ui", "simple", "--thread", "elsewhere"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=ENV,
    )
    assert demo.stdin is not None
    assert demo.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=_lines, args=(demo.stdout, lines), daemon=True)
    reader.start()
    seen: list[str] = []
    try:
        request_id = _wait_for(lines, seen, REQUEST_ID, timeout=30).group(0)
        approve = subprocess.run(
            signoff("--db", str(sqlite_path), "approve", request_id),
            capture_output=True,
            text=True,
            timeout=30,
            env=ENV,
        )
        assert approve.returncode == 0, approve.stderr
        _wait_for(lines, seen, re.compile(re.escape(APPROVED_TEXT)), timeout=30)
        demo.stdin.close()  # the next card finds no keyboard: the demo stops and cancels what is open
        assert demo.wait(timeout=30) == 1
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
        reader.join(timeout=10)
        demo.stdout.close()
    while not lines.empty():
        seen.append(lines.get())
    output = "".join(seen)
    assert f"Request {request_id}: approved by {getpass.getuser()} (cli)." in output
    assert "Stopped (no more input). Cancelled 1 open request(s)." in output
    with SQLiteStore(sqlite_path) as store:
        assert list(statuses(store, "elsewhere").values()) == ["approved", "cancelled"]
        execution = store.get_execution(request_id)
        assert execution is not None
        assert execution.status == "succeeded"


def test_the_welcome_names_the_answers_where_people_give_them(sqlite_path: Path) -> None:
    from rich.console import Console

    from signoff.demo.runner import Demo

    def welcome(**where: str) -> str:
        console = Console(record=True, width=200)
        store = SQLiteStore(sqlite_path)
        try:
            Demo(store, ui="none", thread_id="t", auto=False, db_hint=None, console=console, **where)._intro()
        finally:
            store.close()
        return console.export_text()

    web = welcome(inbox_url="http://127.0.0.1:8765/")
    assert "Decide in the web inbox" in web
    assert "Approve" in web and "Edit" in web and "Respond" in web
    assert not re.search(r"^\s+[ymnr]\s\s", web, re.M), "terminal keys in the web inbox's welcome"
    terminal = welcome()
    assert re.search(r"^│?\s+y\s+approve", terminal, re.M)
