"""`kill -9` of a real `signoff serve` (SQLite) while 50 agents wait and a person decides.

The server is killed with SIGKILL and started again on the same port and database, several
times. Each agent calls `gate.review` once through its own `signoff.Client`, with no retry loop
of its own; the person decides through the API as the requests show up. Afterwards: every agent
got its decision, nothing the server acknowledged was lost, each request was decided exactly
once, and the audit chain verifies.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from signoff import AlreadyDecided, Approve, Client, Gate, Outcome, Reject, RuleSet, Scope, ToolCall
from signoff.store import SQLiteStore

from ..live import free_port

pytestmark = pytest.mark.slow

AGENTS = 50
KILLS = 3
RULES = RuleSet.from_yaml("tools: {deploy: {requires_approval: true, approvers: [alice]}}")


class Server:
    """`signoff serve` in its own process, on a fixed port, killed and started again at will."""

    def __init__(self, db: Path, log: Path) -> None:
        self.db = db
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None
        self.kills = 0

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "signoff.cli",
                    "serve",
                    "--db",
                    f"sqlite:///{self.db}",
                    "--port",
                    str(self.port),
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            assert self.process.poll() is None, f"signoff serve exited: {self.log.read_text()[-2000:]}"
            assert time.monotonic() < deadline, "signoff serve did not start"
            time.sleep(0.05)

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()  # SIGKILL: no shutdown of any kind
        self.process.wait(10)
        self.kills += 1

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(15)


def eventually(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    give_up = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < give_up, "the condition never held"
        time.sleep(0.01)


@contextmanager
def running(server: Server) -> Iterator[Server]:
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_agents_waiting_through_kill_9_of_the_server_each_get_their_one_decision(tmp_path: Path) -> None:
    db = tmp_path / "signoff.db"
    store = SQLiteStore(db)
    store.replace_rules(RULES, actor="test")
    store.add_user("alice", role="member", actor="test")
    person_token, _ = store.issue_credential("token", "alice", actor="test")
    agent_tokens = []
    for n in range(AGENTS):
        store.add_user(f"agent-{n}", role="agent", actor="test")
        agent_tokens.append(store.issue_credential("token", f"agent-{n}", actor="test")[0])
    store.close()

    server = Server(db, tmp_path / "serve.log")
    outcomes: dict[int, Outcome] = {}
    failures: dict[int, BaseException] = {}
    acknowledged: dict[str, str] = {}
    """Decisions the server answered 200 to: request id → status."""
    all_decided = threading.Event()

    def agent(n: int) -> None:
        try:
            with Client(server.url, agent_tokens[n]) as client:
                call = ToolCall(name="deploy", args={"n": n}, id=f"call-{n}")
                outcomes[n] = Gate(client).review(call, Scope(thread_id=f"run-{n}"))
        except BaseException as exc:  # reported below, with the agent's number
            failures[n] = exc

    def person() -> None:
        with Client(server.url, person_token, retry_for=60) as alice:
            while len(acknowledged) < AGENTS and not all_decided.is_set():
                for request in alice.list_requests(status="pending", limit=100):
                    decision = Approve() if int(request.args["n"]) % 2 == 0 else Reject(message="not now")
                    try:
                        decided = alice.decide(request.id, decision)
                    except AlreadyDecided:  # decided, but the answer was lost in a kill
                        continue
                    acknowledged[request.id] = decided.status.value
                    time.sleep(0.03)
                time.sleep(0.05)

    def decided_at_least(count: int) -> None:
        eventually(lambda: len(acknowledged) >= count)

    with running(server):
        agents = [threading.Thread(target=agent, args=(n,), daemon=True) for n in range(AGENTS)]
        for thread in agents:
            thread.start()
        deciding = threading.Thread(target=person, daemon=True)
        deciding.start()
        for kill in range(1, KILLS + 1):  # between decisions: some agents decided, the others waiting
            decided_at_least(kill * AGENTS // (KILLS + 1))
            server.kill()
            time.sleep(0.5)
            server.start()
        for thread in agents:
            thread.join(60)
        all_decided.set()
        deciding.join(60)

    assert server.kills == KILLS
    assert failures == {}, f"agents failed: {failures}"
    assert sorted(outcomes) == list(range(AGENTS)), "every agent got its decision"
    store = SQLiteStore(db)
    try:
        report = store.verify_audit()
        assert report.ok, report.problems
        for n, outcome in outcomes.items():
            [request] = store.list_requests(thread_id=f"run-{n}")
            decided = [
                entry
                for entry in store.audit_entries(request_id=request.id)
                if entry.action == "request.decided"
            ]
            assert len(decided) == 1, f"request {request.id} was decided {len(decided)} times"
            assert request.status.value == outcome.status == ("approved" if n % 2 == 0 else "rejected")
            assert outcome.request_id == request.id
            if request.id in acknowledged:
                assert acknowledged[request.id] == request.status.value, "an acknowledged decision was lost"
    finally:
        store.close()
    assert len(acknowledged) >= AGENTS // 2, "most decisions were answered (the rest were lost in kills)"
