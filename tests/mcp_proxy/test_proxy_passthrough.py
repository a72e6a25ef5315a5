"""Ungated calls over stdio passed through as JSON-RPC lines (signoff.mcp.passthrough).

The upstream records the JSON-RPC id of each run: a call passed through reaches it under one of
the proxy's `signoff-pass-N` ids, a call that took the SDK's way under the proxy session's own
number. Each test checks which way a call went, and that it behaves as the SDK's way does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp.shared.exceptions import MCPError

from .harness import Setup, client

pytestmark = pytest.mark.slow

PASSED = "signoff-pass-"


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return Setup(tmp_path)


def ids(setup: Setup, tool: str, event: str | None = None) -> list[Any]:
    return [run["id"] for run in setup.runs_of(tool, event=event)]


def dumped(result: types.CallToolResult) -> dict[str, Any]:
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


async def list_all(mcp: Any) -> None:
    """Read the tool listing page by page, as a client does before it calls."""
    cursor = None
    while True:
        cursor = (await mcp.list_tools(cursor=cursor)).next_cursor
        if cursor is None:
            return


async def wait_for(condition: Any, seconds: float = 20) -> None:
    with anyio.fail_after(seconds):
        while not condition():
            await anyio.sleep(0.02)


def test_a_listed_ungated_call_passes_as_lines_and_answers_as_the_upstream_does(setup: Setup) -> None:
    async def main() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        calls = [("read_file", {"path": "a"}), ("echo", {"text": "é\u2028x"}), ("nope_not_listed", {})]
        async with client(setup.direct()) as direct:
            expected = [dumped(await direct.call_tool(name, args)) for name, args in calls[:2]]
        async with client(setup.stdio()) as mcp:
            before = dumped(await mcp.call_tool("read_file", {"path": "a"}))  # the client listed nothing yet
            await list_all(mcp)
            got = [dumped(await mcp.call_tool(name, args)) for name, args in calls[:2]]
            with pytest.raises(MCPError, match="unknown tool 'nope_not_listed'"):
                await mcp.call_tool(*calls[2])  # not in the listing: the SDK's way answers
        assert before == expected[0]
        return got, expected

    got, expected = anyio.run(main)
    assert got == expected
    read_ids = ids(setup, "read_file")
    # the direct client's run, then the proxy's two: both passed, since the proxy read the
    # upstream's listing at start-up (to say which tools it gates)
    assert isinstance(read_ids[0], int)
    assert all(isinstance(n, str) and n.startswith(PASSED) for n in read_ids[1:]) and len(read_ids) == 3
    [echo_direct, echo_proxied] = ids(setup, "echo")
    assert isinstance(echo_direct, int) and str(echo_proxied).startswith(PASSED)


def test_a_gated_call_is_not_passed_through(setup: Setup) -> None:
    async def main() -> None:
        async with client(setup.stdio("--max-wait", "0.2")) as mcp:
            await list_all(mcp)
            waited = await mcp.call_tool("delete_file", {"path": "p"})
            assert waited.is_error and "awaits approval" in waited.content[0].text  # type: ignore[union-attr]

    anyio.run(main)
    assert setup.run_count() == 0


def test_the_2026_era_takes_the_sdks_way(setup: Setup) -> None:
    async def main() -> types.CallToolResult:
        async with client(setup.stdio(), mode="auto") as mcp:
            assert mcp.protocol_version == "2026-07-28"
            await list_all(mcp)
            return await mcp.call_tool("read_file", {"path": "a"})

    result = anyio.run(main)
    assert not result.is_error
    [run_id] = ids(setup, "read_file")
    assert not str(run_id).startswith(PASSED)


def test_upstream_progress_reaches_the_client_under_its_own_token(setup: Setup) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    async def main() -> types.CallToolResult:
        async with client(setup.stdio()) as mcp:
            await list_all(mcp)
            return await mcp.call_tool("slow", {"steps": 3}, progress_callback=on_progress)

    result = anyio.run(main)
    assert not result.is_error
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    assert str(ids(setup, "slow")[0]).startswith(PASSED)


def test_the_clients_cancellation_reaches_the_upstream(setup: Setup) -> None:
    async def main() -> None:
        async with client(setup.stdio()) as mcp:
            await list_all(mcp)
            with anyio.CancelScope() as scope:

                async def cancel_once_running() -> None:
                    await wait_for(lambda: ids(setup, "hang"))
                    scope.cancel()

                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(cancel_once_running)
                    await mcp.call_tool("hang", {})
            assert scope.cancelled_caught
            await wait_for(lambda: ids(setup, "hang", "cancelled"))
            # the proxy goes on serving, and the cancelled call's id is free again
            assert not (await mcp.call_tool("read_file", {"path": "q"})).is_error

    anyio.run(main)
    [running] = ids(setup, "hang")
    assert str(running).startswith(PASSED)
    assert ids(setup, "hang", "cancelled") == [running]


def test_an_upstream_that_hangs_times_out_and_is_told_to_stop(setup: Setup) -> None:
    async def main() -> None:
        async with client(setup.stdio("--upstream-timeout", "0.5")) as mcp:
            await list_all(mcp)
            with pytest.raises(MCPError, match=r"did not answer within 0\.5 s"):
                await mcp.call_tool("hang", {})
            await wait_for(lambda: ids(setup, "hang", "cancelled"))
            assert not (await mcp.call_tool("read_file", {"path": "q"})).is_error

    anyio.run(main)
    assert str(ids(setup, "hang")[0]).startswith(PASSED)


def test_an_upstream_crash_under_a_passed_call_is_a_clear_error(setup: Setup) -> None:
    async def main() -> None:
        async with client(setup.stdio()) as mcp:
            await list_all(mcp)
            with pytest.raises(MCPError, match="closed the connection"):
                await mcp.call_tool("crash", {})
            with pytest.raises(MCPError, match="not running"):
                await mcp.call_tool("read_file", {"path": "q"})

    anyio.run(main)
    assert str(ids(setup, "crash")[0]).startswith(PASSED)


def test_odd_lines_that_mention_a_cancel_neither_crash_the_proxy_nor_cancel_a_call(setup: Setup) -> None:
    """Raw lines: a cancel whose requestId is a list, and a request whose text says
    "notifications/cancelled" with a requestId of a call in flight, leave that call running."""
    import json
    import subprocess

    def line(message: dict[str, Any]) -> bytes:
        return json.dumps(message).encode() + b"\n"

    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    }
    process = subprocess.Popen(
        [setup.stdio().command, *setup.stdio().args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=setup.proxy_env(),
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}))
        process.stdin.write(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        echo = {"name": "echo", "arguments": {}}
        process.stdin.write(line({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": echo}))
        process.stdin.flush()
        answers = [json.loads(process.stdout.readline()) for _ in range(2)]
        assert [answer["id"] for answer in answers] == [1, 2]  # echo took the SDK's way: listed now
        slow = {"name": "slow", "arguments": {"steps": 4}}
        process.stdin.write(line({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": slow}))
        odd_cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": [3]}}
        process.stdin.write(line(odd_cancel))
        mention = {"name": "p1", "requestId": 3, "arguments": {"note": "notifications/cancelled"}}
        process.stdin.write(line({"jsonrpc": "2.0", "id": 4, "method": "prompts/get", "params": mention}))
        process.stdin.flush()
        answered = {}
        while len(answered) < 2:
            message = json.loads(process.stdout.readline())
            if "id" in message:
                answered[message["id"]] = message
        assert answered[3]["result"]["isError"] is False  # the passed call ran to its end
        assert "messages" in answered[4]["result"]
    finally:
        process.stdin.close()
        process.wait(20)
        process.stdout.close()
    assert str(ids(setup, "slow")[0]).startswith(PASSED)
    assert ids(setup, "hang", "cancelled") == []
