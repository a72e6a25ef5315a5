"""A gated call survives the proxy's kill -9 (issue 17): under the operator's `--thread`, the
client's retry through a restarted proxy finds its call. Approved but never run: it runs, once.
Running when the proxy died: "in doubt", never asked again and never run again, until a person
lets it run. Either way the upstream (which records each run) runs the tool at most once, and an
approval the dead proxy left unrun is marked `abandoned` and listed.

Real processes throughout: the proxy (killed with SIGKILL), the upstream it starts, SQLite."""

from __future__ import annotations

import subprocess
from contextlib import suppress
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest

from signoff._util import utcnow
from signoff.decisions import Approve
from signoff.execution import DEFAULT_LEASE
from signoff.requests import ExecutionStatus, RequestStatus
from signoff.store import SQLiteStore

from ..live import free_port
from .harness import PYTHON, RawProxy, Setup, client, eventually, pending_request, text_of, wait_for_port

pytestmark = pytest.mark.slow

THREAD = ("--thread", "desk-1")
LATER = DEFAULT_LEASE + timedelta(seconds=1)


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return Setup(tmp_path, rules=None)  # the proxy's own declaration: every tool asks


@pytest.fixture
def store(setup: Setup) -> Any:
    opened = SQLiteStore(setup.db)
    yield opened
    opened.close()


def execution_status(store: SQLiteStore, request_id: str) -> ExecutionStatus | None:
    execution = store.get_execution(request_id)
    return None if execution is None else execution.status


@pytest.mark.parametrize("swept", [False, True], ids=["retry-first", "marked-first"])
def test_killed_before_the_upstream_ran_the_retry_runs_it_once(
    setup: Setup, store: SQLiteStore, swept: bool
) -> None:
    first = RawProxy(setup, *THREAD)
    first.start("tools/call", {"name": "delete_file", "arguments": {"path": "/notes/1"}})
    [request] = eventually(lambda: store.list_requests(status="pending"))
    first.kill()  # before anyone decided: nothing of it is left to run the call
    store.decide(request.id, Approve(), actor="alice")
    assert execution_status(store, request.id) is ExecutionStatus.NOT_STARTED
    if swept:  # the server's sweeper, a lease later
        [marked] = store.mark_abandoned_executions(now=utcnow() + LATER)
        assert marked.request_id == request.id
        assert [e.request_id for e in store.list_executions(status="abandoned")] == [request.id]
        [entry] = store.audit_entries(request_id=request.id, action="execution.abandoned")
        assert entry.data["reason"] == "the process waiting to run it stopped before it did"
    assert setup.run_count() == 0

    second = RawProxy(setup, *THREAD)
    try:
        result = second.call("delete_file", {"path": "/notes/1"})
        assert not result.get("isError"), result
        assert result["structuredContent"] == {"ran": "delete_file", "args": {"path": "/notes/1"}}
    finally:
        second.close()
    assert setup.run_count("delete_file") == 1
    assert [r.id for r in store.list_requests()] == [request.id], "nobody was asked again"
    assert execution_status(store, request.id) is ExecutionStatus.SUCCEEDED
    assert store.list_executions(status="abandoned") == []


def test_killed_while_the_upstream_ran_the_retry_is_told_in_doubt(
    setup: Setup, store: SQLiteStore, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    args = {"path": str(release)}
    first = RawProxy(setup, *THREAD)
    first.start("tools/call", {"name": "wait_for", "arguments": args})
    [request] = eventually(lambda: store.list_requests(status="pending"))
    store.decide(request.id, Approve(), actor="alice")
    eventually(lambda: setup.run_count("wait_for") == 1)  # the upstream is running it
    assert execution_status(store, request.id) is ExecutionStatus.RUNNING
    first.kill()

    second = RawProxy(setup, *THREAD)
    try:
        for _ in range(2):  # every retry hears the same until a person decides
            result = second.call("wait_for", args)
            text = text_of(result)
            assert result["isError"], result
            assert f"request {request.id}" in text and "in doubt" in text
            assert f"signoff rerun {request.id}" in text and "Check in files whether it took effect" in text
        assert execution_status(store, request.id) is ExecutionStatus.IN_DOUBT
        assert [r.id for r in store.list_requests()] == [request.id], "nobody was asked again"
        assert setup.run_count("wait_for") == 1, "not run again"
        [entry] = store.audit_entries(request_id=request.id, action="execution.in_doubt")
        assert entry.data["reason"] == "the running process died"

        store.reset_execution(request.id, actor="alice")  # a person checked: let it run again
        release.touch()
        again = second.call("wait_for", args)
        assert not again.get("isError"), again
    finally:
        second.close()
    assert setup.run_count("wait_for") == 2
    assert execution_status(store, request.id) is ExecutionStatus.SUCCEEDED


def test_killed_while_pending_the_retry_waits_for_the_same_request(setup: Setup, store: SQLiteStore) -> None:
    first = RawProxy(setup, *THREAD)
    first.start("tools/call", {"name": "delete_file", "arguments": {"path": "p"}})
    [request] = eventually(lambda: store.list_requests(status="pending"))
    first.kill()
    second = RawProxy(setup, *THREAD)
    try:
        params = {"name": "delete_file", "arguments": {"path": "p"}, "_meta": {"progressToken": "t"}}
        call = second.start("tools/call", params)
        eventually(lambda: any(request.id in str(note) for note in second.notifications))  # it waits on it
        store.decide(request.id, Approve(), actor="alice")
        answer = second.answer(call)
        assert not answer["result"].get("isError"), answer
    finally:
        second.close()
    assert [r.id for r in store.list_requests()] == [request.id]
    assert setup.run_count("delete_file") == 1


def test_a_later_proxy_numbers_new_calls_after_the_earlier_ones(setup: Setup, store: SQLiteStore) -> None:
    """A call of the same kind that an earlier proxy finished is not taken for the retry: the
    restarted proxy's identical call is a new one, asked anew (its key follows the old ones)."""
    first = RawProxy(setup, *THREAD, "--max-wait", "0.3")
    try:
        first.call("delete_file", {"path": "p"})
        [done] = store.list_requests(status="pending")
        store.decide(done.id, Approve(), actor="alice")
        assert not first.call("delete_file", {"path": "p"}).get("isError")
    finally:
        first.close()
    second = RawProxy(setup, *THREAD, "--max-wait", "0.3")
    try:
        waited = second.call("delete_file", {"path": "p"})
    finally:
        second.close()
    assert waited["isError"] and "awaits approval" in text_of(waited)
    keys = sorted(r.tool_call_id.rsplit(":", 1)[1] for r in store.list_requests())
    assert keys == ["0", "1"]
    assert {r.status for r in store.list_requests()} == {RequestStatus.APPROVED, RequestStatus.PENDING}
    assert setup.run_count("delete_file") == 1


def test_over_streamable_http_the_retry_through_a_new_proxy_is_told_in_doubt(
    setup: Setup, store: SQLiteStore, tmp_path: Path
) -> None:
    """The same, with the proxy serving streamable HTTP (--listen): the client's new session on
    the restarted proxy lands in the operator's thread all the same."""
    args = {"path": str(tmp_path / "release")}

    async def start() -> tuple[subprocess.Popen[bytes], str]:
        port = free_port()
        listen = ("--listen", f"127.0.0.1:{port}")
        process = subprocess.Popen([PYTHON, *setup.proxy_args(*THREAD, *listen)], env=setup.proxy_env())
        try:
            await wait_for_port(port, process)
        except RuntimeError:
            process.kill()
            process.wait(10)
            raise
        return process, f"http://127.0.0.1:{port}/mcp"

    async def main() -> None:
        first, url = await start()
        try:
            async with anyio.create_task_group() as tasks:

                async def doomed() -> None:
                    with suppress(Exception):
                        async with client(url) as mcp:
                            await mcp.call_tool("wait_for", args)

                tasks.start_soon(doomed)
                request = await pending_request(store)
                store.decide(request.id, Approve(), actor="alice")
                while setup.run_count("wait_for") == 0:
                    await anyio.sleep(0.05)
                first.kill()
                first.wait(10)
                tasks.cancel_scope.cancel()  # the client's call has no answer coming
        finally:
            if first.poll() is None:
                first.kill()
                first.wait(10)
        second, url = await start()
        try:
            async with client(url) as mcp:
                result = await mcp.call_tool("wait_for", args)
            text = text_of(result.model_dump(by_alias=True, mode="json"))
            assert result.is_error and f"signoff rerun {request.id}" in text and "in doubt" in text
        finally:
            second.terminate()
            second.wait(10)
        assert [r.id for r in store.list_requests()] == [request.id]
        assert setup.run_count("wait_for") == 1

    anyio.run(main)
