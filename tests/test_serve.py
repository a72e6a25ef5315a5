"""`signoff serve` as a user runs it: a real process, its first-start link, --config and --demo."""

from __future__ import annotations

import contextlib
import os
import queue
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from signoff.cli import app
from signoff.requests import RequestStatus
from signoff.store import SQLiteStore

from .live import free_port

pytestmark = pytest.mark.slow


@contextmanager
def serving(db: Path, *args: str) -> Iterator[tuple[str, queue.Queue[str]]]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "signoff.cli", "serve", "--db", f"sqlite:///{db}", "--port", str(port), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"},
    )
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line.rstrip("\n"))

    pumping = threading.Thread(target=pump, daemon=True)
    pumping.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert process.poll() is None, f"signoff serve exited: {drain(lines)}"
        assert time.monotonic() < deadline, f"signoff serve did not start: {drain(lines)}"
        time.sleep(0.1)
    try:
        yield url, lines
    finally:
        process.terminate()
        process.wait(15)
        pumping.join(5)
        assert process.stdout is not None
        process.stdout.close()


def drain(lines: queue.Queue[str]) -> list[str]:
    out = []
    while not lines.empty():
        out.append(lines.get_nowait())
    return out


def wait_for_line(lines: queue.Queue[str], needle: str, seen: list[str], timeout: float = 20) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.2)
        except queue.Empty:
            continue
        seen.append(line)
        if needle in line:
            return line
    raise AssertionError(f"{needle!r} not printed; got {seen}")


def test_first_start_creates_an_admin_and_prints_a_one_time_login_link(tmp_path: Path) -> None:
    db = tmp_path / "signoff.db"
    seen: list[str] = []
    with serving(db) as (url, lines):
        wait_for_line(lines, f"signoff is serving on {url}", seen)
        link = wait_for_line(lines, "/login?token=so_log_", seen).strip()
        assert link.startswith(f"{url}/login?token=")
    with serving(db) as (url, lines):
        wait_for_line(lines, "Inbox:", seen)
        assert not any("/login?token=" in line for line in drain(lines))
    store = SQLiteStore(db)
    try:
        [admin] = store.list_users()
        assert (admin.name, admin.role) == ("admin", "admin")
        secret = link.split("token=", 1)[1]
        assert store.use_login_link(secret) is not None  # the printed link is live (once)
        assert store.use_login_link(secret) is None
    finally:
        store.close()


def test_config_loads_the_rules_file(tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "tools:\n  wire_money:\n    requires_approval: true\n    allowed_decisions: [approve, reject]\n"
    )
    db = tmp_path / "signoff.db"
    store = SQLiteStore(db)
    store.add_user("bot", role="agent", actor="test")
    token, _ = store.issue_credential("token", "bot", actor="test")
    store.close()
    with serving(db, "--config", str(rules)) as (url, _lines):
        headers = {"Authorization": f"Bearer {token}"}
        explained = httpx.get(f"{url}/v1/explain", params={"tool": "wire_money"}, headers=headers).json()
    assert explained["ask"] is True
    assert explained["allowed_decisions"] == ["approve", "reject"]


def test_demo_agent_asks_through_the_server_and_resumes_on_decisions(tmp_path: Path) -> None:
    db = tmp_path / "signoff.db"
    seen: list[str] = []
    with serving(db, "--demo") as (url, lines):
        wait_for_line(lines, "Decide in the web inbox", seen)
        store = SQLiteStore(db)
        try:
            secret, _ = store.issue_credential("token", "admin", actor="test")
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {secret}"}) as admin:
                first = _next_pending(admin)
                assert first["tool"] == "delete_records"
                assert first["args"]["db_url"] == "***"
                decided = admin.post(f"/v1/requests/{first['id']}/decision", json={"type": "approve"})
                assert decided.status_code == 200
                second = _next_pending(admin, after=first["id"])
                assert second["tool"] == "send_email"
            wait_for_line(lines, "Deleted 3 rows from sessions (prod)", seen)
            assert store.get_request(first["id"]).status is RequestStatus.APPROVED
        finally:
            store.close()


def _next_pending(client: httpx.Client, *, after: str | None = None) -> dict[str, object]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        items = client.get("/v1/requests", params={"status": "pending"}).json()["items"]
        fresh = [item for item in items if after is None or item["id"] > after]
        if fresh:
            return fresh[0]  # type: ignore[no-any-return]
        time.sleep(0.1)
    raise AssertionError("the demo agent asked nothing")


def test_the_demo_shows_the_real_flow_its_rules_are_the_servers(tmp_path: Path) -> None:
    """The demo agent is a real agent (its own user and token, through the API) under the
    server's rules, which the Rules page and explain show (issue 8, item 22)."""
    db = tmp_path / "signoff.db"
    seen: list[str] = []
    with serving(db, "--demo") as (url, lines):
        wait_for_line(lines, "Demo rules added to the server's rules: tool search, tool send_email", seen)
        store = SQLiteStore(db)
        try:
            secret, _ = store.issue_credential("token", "admin", actor="test")
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {secret}"}) as admin:
                tools = admin.get("/v1/rules").json()["rules"]["tools"]
                assert set(tools) == {"search", "send_email", "delete_records"}
                explained = admin.get("/v1/explain", params={"tool": "send_email"}).json()
                assert (explained["ask"], explained["layer"]) == (True, "tool")
                assert "The agent wants to email {to}: {subject}" in admin.get("/rules").text
                first = _next_pending(admin)
                assert first["created_by"] == "demo-agent"
                assert first["rule_origin"] == {
                    "source": "server",
                    "layer": "tool",
                    "key": "delete_records",
                    "authority": "server",
                }
                page = admin.get(f"/requests/{first['id']}").text
                assert "this server&#39;s rules (tool delete_records)" in page
        finally:
            store.close()


def test_the_demo_ends_with_a_command_that_really_replays_its_run(tmp_path: Path) -> None:
    """The suggestion `signoff serve --demo` ends with replays that run: the same demo agent, the
    same thread, so nothing is asked again and no tool that ran runs again (`signoff demo
    --thread` would be another agent's thread, asked all over)."""
    db = tmp_path / "signoff.db"
    seen: list[str] = []
    with serving(db, "--demo") as (url, lines):
        wait_for_line(lines, "Decide in the web inbox", seen)
        store = SQLiteStore(db)
        try:
            secret, _ = store.issue_credential("token", "admin", actor="test")
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {secret}"}) as admin:
                while not any("To see replay" in line for line in seen):
                    for item in admin.get("/v1/requests", params={"status": "pending"}).json()["items"]:
                        admin.post(f"/v1/requests/{item['id']}/decision", json={"type": "approve"})
                    with contextlib.suppress(AssertionError):
                        wait_for_line(lines, "To see replay", seen, timeout=0.5)
            first_run = {request.id for request in store.list_requests(limit=100)}
            ran = [line for line in seen if " runs with " in line]
        finally:
            store.close()
    hint = next(line for line in seen if "To see replay" in line)
    command = shlex.split(hint.split(" start it as ", 1)[1].split(" (with its other options)", 1)[0])
    assert command[:3] == ["signoff", "--db", f"sqlite:///{db}"]
    assert command[3:6] == ["serve", "--demo", "--demo-thread"]
    thread = command[6]
    assert thread.startswith("demo-") and f"thread {thread}" in "\n".join(seen)
    assert len(first_run) == 4 and len(ran) == 6

    again: list[str] = []
    with serving(db, *command[4:]) as (_, lines):
        wait_for_line(lines, "To see replay", again)
    store = SQLiteStore(db)
    try:
        assert {request.id for request in store.list_requests(limit=100)} == first_run  # nothing asked anew
    finally:
        store.close()
    printed = "\n".join(again)
    assert printed.count("decided in an earlier run") == 4
    assert printed.count("it does not run again") == 4
    ran_again = [line.strip() for line in again if " runs with " in line]
    assert len(ran_again) == 2  # search and the staging delete ask nobody, so they run each time
    assert all(line.startswith("⚙ search") or 'env="staging"' in line for line in ran_again)


def test_login_link_prints_the_address_the_server_announced(tmp_path: Path) -> None:
    db = tmp_path / "signoff.db"
    runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None})
    login_link = ["--db", f"sqlite:///{db}", "login-link", "--user", "admin"]
    never_served = runner.invoke(app, login_link)
    assert never_served.exit_code == 1
    assert "no signoff serve has run on this database yet" in never_served.output
    assert "--url" in never_served.output

    with serving(db, "--base-url", "https://signoff.example.com"):
        public = runner.invoke(app, login_link)
    assert public.exit_code == 0, public.output
    assert public.output.startswith("https://signoff.example.com/login?token=so_log_")
    with serving(db) as (url, _):
        assert not url.endswith(":8765")
        local = runner.invoke(app, login_link)
    assert local.output.startswith(f"{url}/login?token=so_log_")
    given = runner.invoke(app, [*login_link, "--url", "https://elsewhere.example.com"])
    assert given.output.startswith("https://elsewhere.example.com/login?token=so_log_")
    store = SQLiteStore(db)
    try:
        secret = local.output.strip().split("token=", 1)[1]
        assert store.use_login_link(secret) is not None  # the printed link is live
        started = [entry for entry in store.audit_entries() if entry.action == "server.started"]
        assert [entry.data["base_url"] for entry in started] == ["https://signoff.example.com", url]
    finally:
        store.close()
