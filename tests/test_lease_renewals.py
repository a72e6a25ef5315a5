"""The leases of running calls are renewed by one thread per store while the tools run, and no
longer once a run has returned; a claim names the process that runs it."""

from __future__ import annotations

import json
import os
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from signoff import Approve, Gate, RuleSet, Scope, ToolCall, renewals
from signoff.execution import current_owner
from signoff.store import SQLiteStore, Store

RULES = RuleSet.from_yaml("tools: {deploy: {requires_approval: true, approvers: [alice]}}")
LEASE = timedelta(seconds=0.3)


def approved(gate: Gate, store: Store, call: ToolCall, scope: Scope) -> None:
    pending = gate.submit(call, scope)
    store.decide(pending.request.id, Approve(), actor="alice")  # type: ignore[union-attr]


def lease_until(store: Store, thread_id: str) -> datetime:
    [request] = store.list_requests(thread_id=thread_id)
    execution = store.get_execution(request.id)
    assert execution is not None and execution.lease_until is not None
    return execution.lease_until


def wait_for(check: Any, timeout: float = 10.0) -> None:
    give_up = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < give_up, "it never happened"
        time.sleep(0.01)


def test_a_running_tools_lease_is_renewed_until_it_returns(store: Store) -> None:
    gate = Gate(store, rules=RULES, lease=LEASE)
    calls = [ToolCall(name="deploy", args={"env": env}, id=f"deploy-{env}") for env in ("dev", "prod")]
    for call in calls:
        approved(gate, store, call, Scope(thread_id=f"renewed-{call.args['env']}"))
    first_leases: dict[str, datetime] = {}
    both_running = threading.Barrier(2)
    renewers: set[int] = set()
    renew = store.renew_lease

    def renew_lease(request_id: str, token: str, *, lease: timedelta) -> bool:
        renewers.add(threading.get_ident())
        return renew(request_id, token, lease=lease)

    store.renew_lease = renew_lease  # type: ignore[method-assign]

    def deploy(env: str) -> str:
        thread_id = f"renewed-{env}"
        first_leases[env] = lease_until(store, thread_id)
        both_running.wait(10)
        wait_for(lambda: lease_until(store, thread_id) > first_leases[env])
        return f"deployed to {env}"

    runs = [
        threading.Thread(target=gate.run, args=(call, deploy, Scope(thread_id=f"renewed-{call.args['env']}")))
        for call in calls
    ]
    for run in runs:
        run.start()
    for run in runs:
        run.join(30)
    assert set(first_leases) == {"dev", "prod"}
    assert len(renewers) == 1  # one thread renews both runs' leases
    assert renewers.isdisjoint(run.ident for run in runs)
    for env, first in first_leases.items():
        execution_lease = lease_until(store, f"renewed-{env}")
        assert execution_lease > first


def test_no_lease_is_renewed_once_its_run_has_returned(sqlite_path: Path) -> None:
    renewals: list[str] = []
    renewing = threading.Event()

    class SlowRenewals(SQLiteStore):
        def renew_lease(self, request_id: str, token: str, *, lease: timedelta) -> bool:
            renewing.set()
            time.sleep(0.05)  # the run returns meanwhile: it waits for this renewal to end
            renewals.append(request_id)
            return super().renew_lease(request_id, token, lease=lease)

    store = SlowRenewals(sqlite_path)
    try:
        gate = Gate(store, rules=RULES, lease=LEASE)
        call = ToolCall(name="deploy", args={"env": "dev"}, id="once")
        approved(gate, store, call, Scope(thread_id="returned"))
        reply = gate.run(
            call, lambda env: renewing.wait(10) and f"deployed to {env}", Scope(thread_id="returned")
        )
        assert reply.executed and reply.content == "deployed to dev"
        after_return = len(renewals)
        assert after_return >= 1
        time.sleep(4 * LEASE.total_seconds() / 3)
        assert len(renewals) == after_return
    finally:
        store.close()


def test_a_forked_child_claims_as_itself() -> None:
    parent = current_owner()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its owner, then out without running the parent's cleanup
        os.write(write, json.dumps(current_owner()).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        child = json.loads(pipe.read())
    os.waitpid(pid, 0)
    assert (child["pid"], parent["pid"]) == (pid, os.getpid())
    assert child["started"] is not None and child["started"] != parent["started"]
    assert current_owner()["started"] == parent["started"]


def test_the_renewing_thread_waits_with_a_run_and_ends_when_none_is_left(monkeypatch: Any) -> None:
    """Started when a run begins waiting, kept however long the decision takes (so that the
    claim, after it, starts no thread), and ended once nothing waits or runs for a while."""
    monkeypatch.setattr(renewals, "IDLE_EXIT", 0.05)
    monkeypatch.setattr(renewals, "IDLE_TICK", 0.01)

    class Renewed:
        def renew_lease(self, request_id: str, token: str, *, lease: timedelta) -> bool:
            return True

    store: Any = Renewed()
    started: list[str] = []
    start = threading.Thread.start

    def counted(thread: threading.Thread) -> None:
        started.append(thread.name)
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", counted)
    with renewals.renewing_for(store):
        renewer = renewals._renewers[store]
        time.sleep(0.3)  # the decision takes many times IDLE_EXIT
        assert renewer.running
        held = renewer.hold("req-1", "token", timedelta(seconds=60))
        renewer.release(held)
    assert started == ["signoff-lease"]
    wait_for(lambda: not renewer.running)
