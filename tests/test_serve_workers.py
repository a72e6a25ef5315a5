"""`signoff serve --workers N`: N processes on one port over PostgreSQL, each a replica (a waiter
served by one wakes on a decision another took), a killed worker replaced, SIGTERM stopping them
all; SQLite refused with the reason."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from signoff import Client, Gate, RuleSet, Scope, Store, ToolCall

from .conftest import url_for
from .live import free_port
from .served import eventually

pytestmark = pytest.mark.slow


def workers_of(parent: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == parent:
                found.add(int(entry.name))
    return found


def test_sqlite_is_refused_with_the_reason(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "signoff.cli",
            "serve",
            "--db",
            f"sqlite:///{tmp_path / 's.db'}",
            "--port",
            str(free_port()),
            "--workers",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "--workers 2 needs PostgreSQL" in done.stderr + done.stdout


def test_workers_share_the_port_and_the_state_and_a_killed_one_is_replaced(
    pg_store: Store, tmp_path: Path
) -> None:
    store = pg_store
    store.replace_rules(
        RuleSet.from_yaml("tools: {deploy: {requires_approval: true, approvers: [alice]}}"), actor="test"
    )
    store.add_user("alice", role="member", actor="test")
    store.add_user("bot", role="agent", actor="test")
    alice, _ = store.issue_credential("token", "alice", actor="test")
    bot, _ = store.issue_credential("token", "bot", actor="test")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with (tmp_path / "serve.log").open("wb") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "signoff.cli",
                "serve",
                "--db",
                url_for(store),
                "--port",
                str(port),
                "--workers",
                "2",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    try:
        eventually(lambda: len(workers_of(process.pid)) == 2 and _healthy(url), timeout=60)
        assert "2 workers" in (tmp_path / "serve.log").read_text()
        first = workers_of(process.pid)
        outcomes: list[str] = []

        def ask(n: int) -> None:
            with Client(url, bot) as client:
                call = ToolCall(name="deploy", args={"n": n}, id=f"c-{n}")
                outcomes.append(Gate(client, rules=None).review(call, Scope(thread_id=f"t-{n}")).status)

        asking = [threading.Thread(target=ask, args=(n,), daemon=True) for n in range(6)]
        for thread in asking:
            thread.start()
        eventually(lambda: len(store.list_requests(status="pending")) == 6)
        victim = min(first)
        os.kill(victim, signal.SIGKILL)
        eventually(lambda: len(workers_of(process.pid)) == 2 and victim not in workers_of(process.pid))
        for request in store.list_requests(status="pending"):
            with httpx.Client(headers={"Connection": "close", "Authorization": f"Bearer {alice}"}) as person:
                answer = person.post(f"{url}/v1/requests/{request.id}/decision", json={"type": "approve"})
                assert answer.status_code == 200, answer.text
        for thread in asking:
            thread.join(30)
        assert outcomes == ["approved"] * 6
        assert "exited (killed by signal 9); starting another" in (tmp_path / "serve.log").read_text()
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(30)
    assert code == 0
    assert workers_of(process.pid) == set()


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False
