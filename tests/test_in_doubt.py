"""A dead execution does not stay `running` (issue 8 item 7): the server's sweeper marks it in
doubt once its lease has run out, audited, and people are told: the event feed, the API's list,
the inbox's notice and page, and the request page with what to do and its button.

The same liveness judgement as claims: on this host the pid decides (a live process is never
marked), elsewhere the lease. Real processes stand in for the dead and the living.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from signoff import Approve, ExecutionStatus, Store, open_store
from signoff.requests import Execution
from signoff.store import SQLiteStore
from tests.conftest import url_for
from tests.helpers import decided_digest
from tests.live import LiveServer
from tests.test_events import event_stream
from tests.test_inbox import Person
from tests.test_store_requests import new_request

ROOT = Path(__file__).resolve().parent.parent
OWNER_OF_CHILD = (
    "import json; from signoff.execution import current_owner; print(json.dumps(current_owner()), flush=True)"
)
SHORT = timedelta(milliseconds=20)


@pytest.fixture
def dead_owner() -> dict[str, Any]:
    """The owner record of a process of this host that has exited."""
    child = subprocess.run([sys.executable, "-c", OWNER_OF_CHILD], capture_output=True, text=True, check=True)
    owner: dict[str, Any] = json.loads(child.stdout)
    return owner


@pytest.fixture
def live_owner() -> Iterator[dict[str, Any]]:
    """The owner record of a process of this host that keeps running."""
    code = OWNER_OF_CHILD + "; import time; time.sleep(120)"
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    owner: dict[str, Any] = json.loads(child.stdout.readline())
    yield owner
    child.kill()
    child.wait(10)
    child.stdout.close()


ELSEWHERE = {"host": "elsewhere.example", "pid": 4242, "started": "1"}


def running(
    store: Store, owner: dict[str, Any], *, lease: timedelta = SHORT, call: str = "c1", **fields: Any
) -> str:
    """An approved request whose execution `owner` claimed with `lease`."""
    request, _ = store.create_request(new_request(tool_call_id=call, **fields))
    store.decide(request.id, Approve(), actor="alice")
    claim = store.claim_execution(
        request.id, args_digest=decided_digest(store, request.id), lease=lease, owner=owner
    )
    assert claim.kind == "claimed"
    return request.id


def status(store: Store, request_id: str) -> ExecutionStatus:
    execution = store.get_execution(request_id)
    assert execution is not None
    return execution.status


def in_doubt_entries(store: Store, request_id: str | None = None) -> list[Any]:
    return list(store.audit_entries(request_id=request_id, action="execution.in_doubt"))


def wait_for(check: Callable[[], Any], timeout: float = 15) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.05)


# -- the store: who is marked -------------------------------------------------------------------


def test_a_dead_local_process_is_marked_once_its_lease_ran_out(
    store: Store, dead_owner: dict[str, Any]
) -> None:
    within = running(store, dead_owner, lease=timedelta(hours=1), call="within")
    ran_out = running(store, dead_owner, call="ran-out")
    time.sleep(SHORT.total_seconds() * 2)
    marked = store.mark_dead_executions()
    assert [execution.request_id for execution in marked] == [ran_out]
    assert marked[0].status is ExecutionStatus.IN_DOUBT
    assert status(store, ran_out) is ExecutionStatus.IN_DOUBT
    assert status(store, within) is ExecutionStatus.RUNNING
    [entry] = in_doubt_entries(store, ran_out)
    assert (entry.actor, entry.channel) == ("system", "sweeper")
    assert entry.data["reason"] == "the running process died"
    assert entry.data["owner"]["pid"] == dead_owner["pid"]
    assert store.mark_dead_executions() == []
    assert len(in_doubt_entries(store)) == 1
    assert store.verify_audit().ok


def test_a_live_local_process_is_never_marked(store: Store, live_owner: dict[str, Any]) -> None:
    request_id = running(store, live_owner)
    time.sleep(SHORT.total_seconds() * 2)
    assert store.mark_dead_executions() == []
    assert status(store, request_id) is ExecutionStatus.RUNNING
    assert in_doubt_entries(store) == []


def test_another_hosts_claim_is_marked_when_its_lease_ran_out(store: Store) -> None:
    renewed = running(store, ELSEWHERE, lease=timedelta(hours=1), call="renewed")
    silent = running(store, ELSEWHERE, call="silent")
    time.sleep(SHORT.total_seconds() * 2)
    assert [execution.request_id for execution in store.mark_dead_executions()] == [silent]
    assert status(store, renewed) is ExecutionStatus.RUNNING
    [entry] = in_doubt_entries(store, silent)
    assert entry.data["reason"] == "its lease ran out: the process on elsewhere.example stopped renewing it"


def test_a_marked_execution_is_not_rerun_and_a_person_may_reset_it(
    store: Store, dead_owner: dict[str, Any]
) -> None:
    request_id = running(store, dead_owner)
    time.sleep(SHORT.total_seconds() * 2)
    store.mark_dead_executions()
    replay = store.claim_execution(
        request_id, args_digest=decided_digest(store, request_id), lease=timedelta(seconds=30)
    )
    assert replay.kind == "in_doubt"
    assert len(in_doubt_entries(store, request_id)) == 1, "the replay does not mark it a second time"
    store.reset_execution(request_id, actor="alice")
    assert (
        store.claim_execution(
            request_id, args_digest=decided_digest(store, request_id), lease=timedelta(seconds=30)
        ).kind
        == "claimed"
    )


def test_sweepers_on_several_replicas_mark_each_execution_once(
    store: Store, dead_owner: dict[str, Any]
) -> None:
    ids = {running(store, dead_owner, call=f"c{n}") for n in range(30)}
    time.sleep(SHORT.total_seconds() * 2)
    replicas = [open_store(url_for(store)) for _ in range(3)]
    marked: list[list[Execution]] = [[] for _ in replicas]
    go = threading.Barrier(len(replicas))

    def sweep(index: int) -> None:
        go.wait()
        for _ in range(3):
            marked[index].extend(replicas[index].mark_dead_executions(limit=7))

    threads = [threading.Thread(target=sweep, args=(n,)) for n in range(len(replicas))]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        for replica in replicas:
            replica.close()
    everyone = [execution.request_id for found in marked for execution in found]
    assert sorted(everyone) == sorted(ids), "each execution marked by exactly one replica"
    assert len(in_doubt_entries(store)) == len(ids)
    assert store.verify_audit().ok


def test_in_doubt_executions_are_listed_newest_first(store: Store) -> None:
    ids = [running(store, ELSEWHERE, call=f"c{n}") for n in range(3)]
    healthy = running(store, ELSEWHERE, lease=timedelta(hours=1), call="healthy")
    time.sleep(SHORT.total_seconds() * 2)
    store.mark_dead_executions()
    assert [e.request_id for e in store.list_executions()] == ids[::-1]
    assert [e.request_id for e in store.list_executions(limit=2)] == ids[:0:-1]
    assert [e.request_id for e in store.list_executions(cursor=ids[1])] == ids[:1]
    assert [e.request_id for e in store.list_executions(status="running")] == [healthy]


# -- the server: the sweeper, the feed, the API ------------------------------------------------


@pytest.fixture
def server(store: Store) -> Iterator[LiveServer]:
    with LiveServer(store) as live:
        yield live


def ask_as_agent(server: LiveServer, agent: httpx.Client, call: str, approvers: list[str]) -> str:
    body = {
        "thread_id": "t1",
        "tool_call_id": call,
        "tool": "send_email",
        "args": {"to": "bob"},
        "approvers": approvers,
    }
    created = agent.post("/v1/requests", json=body)
    assert created.status_code == 201, created.text
    request_id: str = created.json()["id"]
    server.store.decide(request_id, Approve(), actor=approvers[0])
    return request_id


def claim_through_api(
    agent: httpx.Client, request_id: str, owner: dict[str, Any], lease: float, digest: str
) -> None:
    claimed = agent.post(
        f"/v1/requests/{request_id}/execution",
        json={"action": "claim", "owner": owner, "lease_seconds": lease, "args_digest": digest},
    )
    assert claimed.status_code == 200, claimed.text
    assert claimed.json()["kind"] == "claimed"


def test_the_sweeper_marks_in_doubt_and_the_api_lists_it(server: LiveServer, store: Store) -> None:
    alice, bob = server.user("alice"), server.user("bob")
    with (
        server.client(server.user("bot", "agent")) as agent,
        server.client(alice) as as_alice,
        server.client(bob) as as_bob,
    ):
        hers = ask_as_agent(server, agent, "hers", ["alice"])
        his = ask_as_agent(server, agent, "his", ["bob"])
        with event_stream(server, alice) as events:
            for request_id in (hers, his):
                claim_through_api(
                    agent, request_id, ELSEWHERE, lease=0.05, digest=decided_digest(server.store, request_id)
                )
            event = wait_for(lambda: _event_for(events, hers))
            assert event["event"] == "updated"
            assert event["action"] == "execution.in_doubt"
        listed = as_alice.get("/v1/executions").json()
        assert [item["request_id"] for item in listed["items"]] == [hers]
        assert listed["items"][0]["execution"]["status"] == "in_doubt"
        assert listed["items"][0]["request"]["tool"] == "send_email"
        assert listed["next_cursor"] is None
        assert [item["request_id"] for item in as_bob.get("/v1/executions").json()["items"]] == [his]
        assert {item["request_id"] for item in agent.get("/v1/executions").json()["items"]} == {hers, his}
        assert as_alice.get("/v1/executions", params={"status": "running"}).json()["items"] == []
        assert as_alice.get("/v1/executions", params={"status": "maybe"}).status_code == 422
        assert agent.get(f"/v1/requests/{hers}/execution").json()["status"] == "in_doubt"
        metrics = httpx.get(f"{server.url}/metrics").text
        assert 'signoff_executions{status="in_doubt"} 2.0' in metrics
        assert 'signoff_executions{status="running"} 0.0' in metrics
        assert 'signoff_executions{status="abandoned"} 0.0' in metrics


def _event_for(events: Any, request_id: str) -> dict[str, Any] | None:
    while not events.empty():
        event = events.get()
        if event["request"]["id"] == request_id and event["action"] == "execution.in_doubt":
            return event  # type: ignore[no-any-return]
    return None


def test_only_people_reset_and_an_agents_attempt_is_audited(server: LiveServer, store: Store) -> None:
    with server.client(server.user("bot", "agent")) as agent, server.client(server.user("alice")) as alice:
        request_id = ask_as_agent(server, agent, "c1", ["alice"])
        claim_through_api(
            agent, request_id, ELSEWHERE, lease=0.05, digest=decided_digest(server.store, request_id)
        )
        wait_for(lambda: status(store, request_id) is ExecutionStatus.IN_DOUBT)
        refused = agent.post(f"/v1/requests/{request_id}/execution", json={"action": "reset"})
        assert refused.status_code == 403
        [entry] = store.audit_entries(request_id=request_id, action="access.refused")
        assert (entry.actor, entry.data["reason"]) == (
            "bot",
            "a person decides whether an in-doubt call may run again",
        )
        reset = alice.post(f"/v1/requests/{request_id}/execution", json={"action": "reset"})
        assert reset.status_code == 200, reset.text
        assert reset.json()["execution"]["status"] == "not_started"


# -- the inbox ----------------------------------------------------------------------------------


def test_the_inbox_prompts_a_person_and_the_request_page_says_what_to_do(
    server: LiveServer, store: Store
) -> None:
    alice = Person(server, "alice")
    try:
        with server.client(server.user("bot", "agent")) as agent:
            assert "in-doubt-notice" not in alice.client.get("/").text
            request_id = ask_as_agent(server, agent, "c1", ["alice"])
            claim_through_api(
                agent, request_id, ELSEWHERE, lease=0.05, digest=decided_digest(server.store, request_id)
            )
            wait_for(lambda: status(store, request_id) is ExecutionStatus.IN_DOUBT)
        inbox = alice.client.get("/").text
        assert "1 tool call may or may not have run: its process stopped while running it." in inbox
        assert 'href="/executions"' in inbox
        listing = alice.client.get("/executions")
        assert listing.status_code == 200
        assert f'href="/requests/{request_id}"' in listing.text
        page = alice.client.get(f"/requests/{request_id}").text
        assert (
            "In doubt: this call was running when its process stopped (its lease ran out: the process "
            "on elsewhere.example stopped renewing it)." in page
        )
        assert f"signoff rerun {request_id}" in page
        assert f'action="/requests/{request_id}/execution/reset"' in page
        without_csrf = alice.client.post(f"/requests/{request_id}/execution/reset")
        assert without_csrf.status_code == 403
        assert status(store, request_id) is ExecutionStatus.IN_DOUBT
        reset = alice.client.post(f"/requests/{request_id}/execution/reset", data={"csrf_token": alice.csrf})
        assert reset.status_code == 303
        assert reset.headers["location"] == f"/requests/{request_id}"
        assert status(store, request_id) is ExecutionStatus.NOT_STARTED
        [entry] = store.audit_entries(request_id=request_id, action="execution.reset")
        assert (entry.actor, entry.channel) == ("alice", "web")
        assert "in-doubt-notice" not in alice.client.get("/").text
        again = alice.client.post(f"/requests/{request_id}/execution/reset", data={"csrf_token": alice.csrf})
        assert again.status_code == 409
        assert "only in_doubt, failed or abandoned can be reset" in again.text
    finally:
        alice.close()


def test_a_person_who_may_not_see_the_request_gets_no_notice_and_cannot_reset(
    server: LiveServer, store: Store
) -> None:
    mallory = Person(server, "mallory")
    try:
        with server.client(server.user("bot", "agent")) as agent:
            request_id = ask_as_agent(server, agent, "c1", ["alice"])
            claim_through_api(
                agent, request_id, ELSEWHERE, lease=0.05, digest=decided_digest(server.store, request_id)
            )
            wait_for(lambda: status(store, request_id) is ExecutionStatus.IN_DOUBT)
        assert "in-doubt-notice" not in mallory.client.get("/").text
        assert request_id not in mallory.client.get("/executions").text
        refused = mallory.client.post(
            f"/requests/{request_id}/execution/reset", data={"csrf_token": mallory.csrf}
        )
        assert refused.status_code == 403
        assert status(store, request_id) is ExecutionStatus.IN_DOUBT
    finally:
        mallory.close()


# -- a real kill -9 -----------------------------------------------------------------------------


@pytest.mark.slow
def test_a_killed_agent_is_marked_in_doubt_by_the_server_without_any_replay(
    server: LiveServer, store: Store, tmp_path: Path
) -> None:
    log = tmp_path / "tool.log"
    agent = subprocess.Popen(
        [sys.executable, "-m", "tests.scripts.agent", url_for(store), "run-kill", str(log), "slow"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
        env={**os.environ, "AGENT_LEASE": "1"},
    )
    try:
        [pending] = wait_for(lambda: store.list_requests(thread_id="run-kill", status="pending"))
        store.decide(pending.id, Approve(), actor="alice")
        wait_for(lambda: log.exists() and log.read_text())
        time.sleep(1.5)  # the tool runs on, renewing its lease: it is not marked
        assert status(store, pending.id) is ExecutionStatus.RUNNING
        os.kill(agent.pid, signal.SIGKILL)
        agent.wait(10)
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait(10)
    wait_for(lambda: status(store, pending.id) is ExecutionStatus.IN_DOUBT)
    [entry] = in_doubt_entries(store, pending.id)
    assert (entry.channel, entry.data["reason"]) == ("sweeper", "the running process died")
    assert log.read_text().splitlines() == ["ran cus_42 1999"]
    assert isinstance(store, SQLiteStore) or store.verify_audit().ok
