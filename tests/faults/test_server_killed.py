"""`kill -9` of a real `signoff serve` (SQLite) while 50 agents wait and a person decides.

The server is killed with SIGKILL and started again on the same port and database, several
times. Each agent calls `gate.review` once through its own `signoff.Client`, with no retry loop
of its own; the person decides through the API as the requests show up. Afterwards: every agent
got its decision, nothing the server acknowledged was lost, each request was decided exactly
once, and the audit chain verifies.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from signoff import AlreadyDecided, Approve, Client, Gate, Outcome, Reject, RuleSet, Scope, ToolCall
from signoff.store import SQLiteStore

from ..served import ServeProcess, eventually, running

pytestmark = pytest.mark.slow

AGENTS = 50
KILLS = 3
RULES = RuleSet.from_yaml("tools: {deploy: {requires_approval: true, approvers: [alice]}}")


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

    server = ServeProcess(f"sqlite:///{db}", tmp_path / "serve.log")
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
