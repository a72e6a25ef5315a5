"""A full disk and recovery, and a read-only database, on a live server over a real SQLite file:
clear JSON 503s naming the problem (on connections that stay open), `/healthz` saying so, reads
still served, nothing half-written, and service again as soon as the disk has room, without a
restart."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from signoff.server import ServerSettings
from signoff.server.disk_health import MinFreeDisk
from signoff.store import SQLiteStore

from ..live import LiveServer
from ..test_api import ask
from ..test_server_errors import connection_of, error_of
from ..test_store_requests import new_request
from .disks import fill, read_only_view, small_disk

pytestmark = pytest.mark.slow
ARGS = {"to": "bob@example.com", "subject": "x" * 2000}
SMALL_DISK = ServerSettings(sweep_interval=0.2, min_free_disk=MinFreeDisk.parse("64KiB"))
"""The disks here are 4 MiB tmpfs: under the default 100 MiB /healthz requires free."""


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    with small_disk(tmp_path / "disk") as mounted:
        yield mounted


def test_a_full_disk_gives_503s_changes_nothing_and_recovers_without_a_restart(disk: Path) -> None:
    store = SQLiteStore(disk / "signoff.db")
    try:
        with LiveServer(store, SMALL_DISK) as server:
            agent = server.client(server.user("bot", "agent"))
            alice = server.client(server.user("alice"))
            asked = [ask(agent, tool_call_id=f"before-{n}", args=ARGS).json()["id"] for n in range(3)]
            head = store.audit_head_seq()

            filler = fill(disk)
            refused = [ask(agent, tool_call_id=f"full-{n}", args=ARGS) for n in range(4)]
            refused.append(alice.post(f"/v1/requests/{asked[0]}/decision", json={"type": "approve"}))
            health = agent.get("/healthz")
            listed = agent.get("/v1/requests")
            one = alice.get(f"/v1/requests/{asked[1]}")

            for answer in refused:
                assert answer.status_code == 503, answer.text
                kind, message = error_of(answer)
                assert kind == "StoreUnavailable" and "the disk is full" in message
            assert health.status_code == 503 and health.json()["ok"] is False
            assert "the disk is full" in health.json()["error"]["message"]
            assert listed.status_code == 200 and {item["id"] for item in listed.json()["items"]} == set(asked)
            assert one.status_code == 200 and one.json()["status"] == "pending"
            assert len({connection_of(answer) for answer in [*refused[:4], health, listed]}) == 1
            assert store.audit_head_seq() == head  # nothing half-written
            assert all(store.find_request("t1", f"full-{n}") is None for n in range(4))

            filler.unlink()  # room again: the same server serves, no restart
            assert [ask(agent, tool_call_id=f"full-{n}", args=ARGS).status_code for n in range(4)] == [
                201
            ] * 4
            decided = alice.post(f"/v1/requests/{asked[0]}/decision", json={"type": "approve"})
            assert decided.status_code == 200 and decided.json()["status"] == "approved"
            assert agent.get("/healthz").json()["ok"] is True
            agent.close()
            alice.close()
        created = [entry for entry in store.audit_entries() if entry.action == "request.created"]
        assert len(created) == len(store.list_requests(limit=100)) == 7
        assert store.verify_audit().ok
    finally:
        store.close()


def test_a_read_only_database_answers_503s_and_healthz_says_so(disk: Path, tmp_path: Path) -> None:
    owner = SQLiteStore(disk / "signoff.db")  # another process, which can write, keeps it open
    request_id = owner.create_request(new_request())[0].id
    owner.add_user("bot", role="agent", actor="test")
    token, _ = owner.issue_credential("token", "bot", actor="test")
    try:
        with read_only_view(disk, tmp_path / "read-only") as view:
            store = SQLiteStore(view / "signoff.db")
            try:
                with LiveServer(store, SMALL_DISK) as server, server.client(token) as agent:
                    health = agent.get("/healthz")
                    created = ask(agent, tool_call_id="refused")
                    listed = agent.get("/v1/requests", params={"status": "pending"})
                    assert connection_of(health) == connection_of(created) == connection_of(listed)
                assert health.status_code == 503 and health.json()["ok"] is False
                assert "the database is read-only" in health.json()["error"]["message"]
                assert created.status_code == 503
                assert error_of(created)[0] == "StoreUnavailable"
                assert "the database is read-only" in error_of(created)[1]
                assert listed.status_code == 200
            finally:
                store.close()
        assert owner.find_request("t1", "refused") is None
        assert owner.get_request(request_id).status.value == "pending"
    finally:
        owner.close()
