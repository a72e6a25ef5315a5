"""The shipped deployment, run for real: nginx (Debian's, with `deploy/nginx/`) in front of three
`signoff serve` replicas on one PostgreSQL. One replica is killed with SIGKILL while agents wait
and a person decides, all through nginx, and stays dead. Afterwards: every agent got its
decision, each request was decided once, nothing the server acknowledged was lost, requests
past their deadline were expired once by the replicas left (the sweeper moved), every decision's
webhook arrived (the outbox moved; a retry repeats its `webhook-id`), the replicas left sealed
every queued audit entry (the sealer moved), and the audit chain verifies.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import httpx
import pytest

from signoff import AlreadyDecided, Approve, Client, Gate, Outcome, Reject, RuleSet, Scope, ToolCall
from signoff.store import Store

from ..conftest import url_for
from ..live import free_port
from ..receivers import Receiver
from ..served import ServeProcess, eventually, running
from .nginx import NGINX, Nginx

pytestmark = pytest.mark.slow

AGENTS = 30
LAPSING = 5
RULES = RuleSet.from_yaml(
    """
tools:
  deploy: {requires_approval: true, approvers: [alice]}
  lapse: {requires_approval: true, approvers: [alice], deadline: 3s, on_expire: reject}
"""
)


@pytest.fixture
def nginx_binary() -> str:
    if not Path(NGINX).exists():
        pytest.skip(f"deployment tests need Debian's nginx at {NGINX} (apt-get install nginx)")
    return NGINX


def test_the_shipped_nginx_configuration_is_valid(nginx_binary: str, tmp_path: Path) -> None:
    checked = Nginx(tmp_path, free_port(), [free_port(), free_port()]).check()
    assert checked.returncode == 0, checked.stderr
    assert "test is successful" in checked.stderr


def test_kill_9_of_a_replica_behind_nginx_loses_and_doubles_nothing(
    nginx_binary: str, pg_store: Store, tmp_path: Path
) -> None:
    store = pg_store
    store.replace_rules(RULES, actor="test")
    store.add_user("alice", role="member", actor="test")
    person_token, _ = store.issue_credential("token", "alice", actor="test")
    agent_tokens = []
    for n in range(AGENTS + LAPSING):
        store.add_user(f"agent-{n}", role="agent", actor="test")
        agent_tokens.append(store.issue_credential("token", f"agent-{n}", actor="test")[0])

    ports = [free_port() for _ in range(3)]
    proxy_port = free_port()
    base_url = f"http://127.0.0.1:{proxy_port}"
    replicas = [
        ServeProcess(
            url_for(store),
            tmp_path / f"replica-{n}.log",
            port=port,
            args=[
                *("--base-url", base_url, "--forwarded-allow-ips", "127.0.0.1", "--allow-private-webhooks"),
                *("--outbox-lease", "2"),  # a delivery the killed replica held is another's 2 s later
            ],
        )
        for n, port in enumerate(ports)
    ]
    outcomes: dict[int, Outcome] = {}
    failures: dict[int, BaseException] = {}
    acknowledged: dict[str, str] = {}
    stop_deciding = threading.Event()

    def agent(n: int, tool: str) -> None:
        try:
            with Client(base_url, agent_tokens[n]) as client:
                call = ToolCall(name=tool, args={"n": n}, id=f"call-{n}")
                outcomes[n] = Gate(client).review(call, Scope(thread_id=f"run-{n}"))
        except BaseException as exc:  # reported below, with the agent's number
            failures[n] = exc

    def person() -> None:
        with Client(base_url, person_token, retry_for=60) as alice:
            while not stop_deciding.is_set():
                for request in alice.list_requests(status="pending", tool="deploy", limit=100):
                    decision = Approve() if int(request.args["n"]) % 2 == 0 else Reject(message="not now")
                    try:
                        decided = alice.decide(request.id, decision)
                    except AlreadyDecided:  # decided, but the answer was lost with the replica
                        continue
                    acknowledged[request.id] = decided.status.value
                    time.sleep(0.02)
                time.sleep(0.05)

    with Receiver() as receiver, running(*replicas), Nginx(tmp_path / "nginx", proxy_port, ports) as proxy:
        store.add_webhook(receiver.url, events=["request.decided"], allow_private=True, actor="test")
        forwarded = httpx.get(f"{proxy.url}/healthz", timeout=5)
        assert forwarded.status_code == 200 and forwarded.json()["ok"] is True
        threads = [threading.Thread(target=agent, args=(n, "deploy"), daemon=True) for n in range(AGENTS)]
        for thread in threads:
            thread.start()
        deciding = threading.Thread(target=person, daemon=True)
        deciding.start()
        eventually(lambda: len(acknowledged) >= AGENTS // 3, timeout=60)
        replicas[0].kill()  # some agents decided, the others waiting; some of them on this replica
        assert len(acknowledged) < AGENTS, "the replica died while agents still waited"
        lapsing = [
            threading.Thread(target=agent, args=(n, "lapse"), daemon=True)
            for n in range(AGENTS, AGENTS + LAPSING)
        ]
        for thread in lapsing:
            thread.start()
        for thread in threads + lapsing:
            thread.join(90)
        stop_deciding.set()
        deciding.join(60)
        decided_ids = {store.list_requests(thread_id=f"run-{n}")[0].id for n in range(AGENTS)}
        eventually(lambda: delivered_ids(receiver) >= decided_ids, timeout=60)
        eventually(lambda: store.audit_unsealed()[0] == 0, timeout=20)  # the replicas left seal
        assert replicas[0].kills == 1 and all(replica.process.poll() is None for replica in replicas[1:])

    assert failures == {}, f"agents failed: {failures}"
    assert sorted(outcomes) == list(range(AGENTS + LAPSING)), "every agent got its decision"
    report = store.verify_audit(seal=False)
    assert report.ok and report.unsealed == 0, report.problems
    for n, outcome in outcomes.items():
        [request] = store.list_requests(thread_id=f"run-{n}")
        assert outcome.request_id == request.id
        entries = [entry.action for entry in store.audit_entries(request_id=request.id)]
        if n < AGENTS:
            assert entries.count("request.decided") == 1, f"{request.id}: {entries}"
            assert request.status.value == outcome.status == ("approved" if n % 2 == 0 else "rejected")
            if request.id in acknowledged:
                assert acknowledged[request.id] == request.status.value, "an acknowledged decision was lost"
        else:
            assert entries.count("request.expired") == 1, f"{request.id}: {entries}"
            assert request.status.value == outcome.status == "expired"
    delivered: dict[str, set[str]] = {}
    for post in receiver.delivered:
        event = json.loads(post.body)
        delivered.setdefault(event["data"]["request"]["id"], set()).add(post.headers["webhook-id"])
    assert set(delivered) == decided_ids, "every decision's webhook arrived"
    assert all(len(ids) == 1 for ids in delivered.values()), "a repeated delivery is the same message"
    assert len(acknowledged) >= AGENTS // 2, "most decisions were answered (the rest were lost in the kill)"


def delivered_ids(receiver: Receiver) -> set[str]:
    return {json.loads(post.body)["data"]["request"]["id"] for post in receiver.delivered}
