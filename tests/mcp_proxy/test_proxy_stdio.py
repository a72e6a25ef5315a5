"""The official MCP client ↔ `signoff mcp-proxy` (a real subprocess, stdio) ↔ a real MCP server.

People decide through the Store on the proxy's SQLite file, as the CLI or the inbox would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp.shared.exceptions import MCPError

from signoff.decisions import Approve, Edit, Reject, Respond
from signoff.errors import InvalidArguments
from signoff.requests import RequestStatus
from signoff.store import SQLiteStore

from .harness import Setup, client, pending_request, until

pytestmark = pytest.mark.slow


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return Setup(tmp_path)


@pytest.fixture
def store(setup: Setup) -> Any:
    opened = SQLiteStore(setup.db)
    yield opened
    opened.close()


async def all_pages(list_page: Any, key: str) -> list[list[dict[str, Any]]]:
    pages, cursor = [], None
    while True:
        page = await list_page(cursor)
        dumped = page.model_dump(by_alias=True, mode="json", exclude_none=True)
        pages.append(dumped)
        cursor = page.next_cursor
        if cursor is None:
            return pages


async def tool_names(mcp: Any) -> list[str]:
    pages = await all_pages(lambda c: mcp.list_tools(cursor=c), "tools")
    return [tool["name"] for page in pages for tool in page["tools"]]


def test_listings_equal_the_upstreams_page_by_page(setup: Setup, store: SQLiteStore) -> None:
    async def listings(target: Any) -> dict[str, Any]:
        async with client(target) as mcp:
            return {
                "server": mcp.server_info.model_dump() if mcp.server_info else None,
                "instructions": mcp.instructions,
                "tools": await all_pages(lambda c: mcp.list_tools(cursor=c), "tools"),
                "resources": await all_pages(lambda c: mcp.list_resources(cursor=c), "resources"),
                "prompts": await all_pages(lambda c: mcp.list_prompts(cursor=c), "prompts"),
                "read": (await mcp.read_resource("file:///r1.txt")).model_dump(),
                "prompt": (await mcp.get_prompt("p2")).model_dump(),
            }

    async def main() -> None:
        direct = await listings(setup.direct())
        proxied = await listings(setup.stdio())
        assert proxied == direct
        assert len(direct["tools"]) == 3  # pagination really happened (9 tools, pages of 3)
        tools = [tool for page in direct["tools"] for tool in page["tools"]]
        assert tools[0]["annotations"] == {"title": "Read a file", "readOnlyHint": True}

    anyio.run(main)


def test_an_ungated_call_passes_through_byte_identical(setup: Setup) -> None:
    """Raw JSON-RPC lines: the proxy answers a read-only tool's call with the upstream's bytes."""
    import subprocess

    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "read_file", "arguments": {"path": "a"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "é\\u2028x"}},
        },
    ]

    def exchange(command: list[str], environment: dict[str, str]) -> dict[int, bytes]:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=environment)
        assert process.stdin is not None and process.stdout is not None
        answers: dict[int, bytes] = {}
        for line in lines:
            process.stdin.write(json.dumps(line).encode() + b"\n")
            process.stdin.flush()
            if "id" in line:
                raw = process.stdout.readline()
                answers[json.loads(raw)["id"]] = raw
        process.stdin.close()
        process.wait(20)
        process.stdout.close()
        return answers

    direct = exchange(setup.upstream_command(), setup.direct().env or {})
    proxied = exchange([setup.stdio().command, *setup.stdio().args], setup.proxy_env())
    assert proxied[2] == direct[2]
    assert proxied[3] == direct[3]
    assert setup.run_count("read_file") == 2


def test_approve_runs_the_tool_once_and_progress_arrives_while_waiting(
    setup: Setup, store: SQLiteStore
) -> None:
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    async def main() -> None:
        async with client(setup.stdio()) as mcp, anyio.create_task_group() as tasks:
            results: list[types.CallToolResult] = []

            async def call() -> None:
                results.append(
                    await mcp.call_tool("delete_file", {"path": "/tmp/x"}, progress_callback=on_progress)
                )

            tasks.start_soon(call)
            request = await pending_request(store, tool="files.delete_file")
            assert (request.agent, request.client) == (None, "mcp")  # its clientInfo name is recorded only
            assert request.args_schema is not None and request.args_schema["required"] == ["path"]
            assert request.tool_description == "The delete_file tool."
            assert setup.run_count() == 0
            while not any(message and request.id in message for _, message in progress):
                await anyio.sleep(0.05)
            store.decide(request.id, Approve(), actor="alice", channel="cli")
        [result] = results
        assert not result.is_error
        assert result.structured_content == {"ran": "delete_file", "args": {"path": "/tmp/x"}}
        assert setup.run_count("delete_file") == 1
        assert any(message and request.id in message for _, message in progress)
        values = [value for value, _ in progress]
        assert values == sorted(values)
        execution = store.get_execution(request.id)
        assert execution is not None and execution.status.value == "succeeded"

    anyio.run(main)


@pytest.mark.parametrize("kind", ["edit", "reject", "respond"])
def test_each_decision_reaches_the_client(setup: Setup, store: SQLiteStore, kind: str) -> None:
    async def main() -> None:
        async with client(setup.stdio()) as mcp, anyio.create_task_group() as tasks:
            results: list[types.CallToolResult] = []

            async def call() -> None:
                results.append(await mcp.call_tool("write_file", {"path": "a.txt", "text": "hello"}))

            tasks.start_soon(call)
            request = await pending_request(store, tool="files.write_file")
            if kind == "edit":
                with pytest.raises(InvalidArguments):  # checked against the tool's inputSchema
                    store.decide(request.id, Edit(args={"path": "a.txt", "text": "x" * 30}), actor="alice")
                store.decide(request.id, Edit(args={"path": "b.txt", "text": "bye"}), actor="alice")
            elif kind == "reject":
                store.decide(request.id, Reject(message="not that file"), actor="alice")
            else:
                store.decide(request.id, Respond(message="The file already says hello."), actor="alice")
        [result] = results
        text = result.content[0].text  # type: ignore[union-attr]
        if kind == "edit":
            assert not result.is_error
            assert "b.txt" in text and "updated" in text
            assert result.structured_content == {
                "ran": "write_file",
                "args": {"path": "b.txt", "text": "bye"},
            }
            assert setup.run_count("write_file") == 1
        elif kind == "reject":
            assert result.is_error
            assert "rejected" in text and "not that file" in text
            assert setup.run_count() == 0
        else:
            assert not result.is_error
            assert text == "The file already says hello."
            assert setup.run_count() == 0

    anyio.run(main)


def test_max_wait_then_the_same_call_continues_the_same_request(setup: Setup, store: SQLiteStore) -> None:
    async def main() -> None:
        async with client(setup.stdio("--max-wait", "0.5")) as mcp:
            first = await mcp.call_tool("delete_file", {"path": "p"})
            assert first.is_error
            [request] = store.list_requests(tool="files.delete_file")
            text = first.content[0].text  # type: ignore[union-attr]
            assert request.id in text and "awaits approval" in text and "same arguments" in text
            assert request.status is RequestStatus.PENDING and setup.run_count() == 0
            store.decide(request.id, Approve(), actor="alice")
            second = await mcp.call_tool("delete_file", {"path": "p"})
            assert not second.is_error
            assert len(store.list_requests(tool="files.delete_file")) == 1
            assert setup.run_count("delete_file") == 1
            # done: the same args once more are a new call, asked anew
            third = await mcp.call_tool("delete_file", {"path": "p"})
            assert third.is_error and "awaits approval" in third.content[0].text  # type: ignore[union-attr]
            assert len(store.list_requests(tool="files.delete_file")) == 2
            assert setup.run_count("delete_file") == 1

    anyio.run(main)


def test_a_deadline_gives_the_on_expire_outcome(setup: Setup, store: SQLiteStore) -> None:
    setup.rules = "services:\n  files: {approval_mode: all, deadline: 1s, expire_message: Nobody answered.}\n"

    async def main() -> None:
        async with client(setup.stdio()) as mcp:
            result = await mcp.call_tool("delete_file", {"path": "p"})
        assert result.is_error and result.content[0].text == "Nobody answered."  # type: ignore[union-attr]
        [request] = store.list_requests(tool="files.delete_file")
        assert request.status is RequestStatus.EXPIRED
        assert setup.run_count() == 0

    anyio.run(main)


def test_client_cancellation_cancels_the_request(setup: Setup, store: SQLiteStore) -> None:
    async def main() -> None:
        async with client(setup.stdio()) as mcp:
            with anyio.move_on_after(30) as scope, anyio.CancelScope() as inner:

                async def cancel_once_pending() -> None:
                    await pending_request(store, tool="files.delete_file")
                    inner.cancel()

                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(cancel_once_pending)
                    await mcp.call_tool("delete_file", {"path": "p"})
            assert not scope.cancelled_caught
            request = await until(
                store, lambda r: r.status is RequestStatus.CANCELLED, tool="files.delete_file"
            )
            assert "cancelled" in (request.resolution or {}).get("reason", "")
            assert setup.run_count() == 0
            # the proxy goes on serving
            assert not (await mcp.call_tool("read_file", {"path": "q"})).is_error

    anyio.run(main)


def test_an_upstream_crash_is_a_clear_error_and_cancels_open_requests(
    setup: Setup, store: SQLiteStore
) -> None:
    async def main() -> None:
        async with client(setup.stdio()) as mcp, anyio.create_task_group() as tasks:
            errors: list[str] = []

            async def waiting_call() -> None:
                try:
                    await mcp.call_tool("delete_file", {"path": "p"})
                except MCPError as exc:
                    errors.append(exc.error.message)

            tasks.start_soon(waiting_call)
            await pending_request(store, tool="files.delete_file")
            with pytest.raises(MCPError, match="closed the connection"):
                await mcp.call_tool("crash", {})
            request = await until(
                store, lambda r: r.status is RequestStatus.CANCELLED, tool="files.delete_file"
            )
            assert "exited" in (request.resolution or {}).get("reason", "")
            while not errors:
                await anyio.sleep(0.05)
            assert "not running" in errors[0]
            with pytest.raises(MCPError, match="not running"):
                await mcp.call_tool("read_file", {"path": "q"})

    anyio.run(main)


def test_an_upstream_that_hangs_is_a_clear_error(setup: Setup) -> None:
    async def main() -> None:
        async with client(setup.stdio("--upstream-timeout", "0.5")) as mcp:
            with pytest.raises(MCPError, match=r"did not answer within 0\.5 s"):
                await mcp.call_tool("hang", {})

    anyio.run(main)


def test_bad_input_gets_a_clear_error(setup: Setup, store: SQLiteStore) -> None:
    async def main() -> None:
        async with client(setup.stdio()) as mcp:
            broken = await mcp.call_tool("write_file", {"path": "a"})
            assert broken.is_error
            assert "do not match the schema: text is required" in broken.content[0].text  # type: ignore[union-attr]
            with pytest.raises(MCPError, match="unknown tool 'nope'"):
                await mcp.call_tool("nope", {})
        assert store.list_requests() == [] and setup.run_count() == 0

    anyio.run(main)


def test_tool_annotations_drive_when_conditions(setup: Setup, store: SQLiteStore) -> None:
    setup.rules = "services:\n  files:\n    when: tool_annotations.destructiveHint\n"

    async def destructive() -> None:
        async with client(setup.stdio("--max-wait", "0.2")) as mcp:
            waited = await mcp.call_tool("delete_file", {"path": "p"})
            assert waited.is_error and "awaits approval" in waited.content[0].text  # type: ignore[union-attr]
            assert not (await mcp.call_tool("read_file", {"path": "p"})).is_error  # read-only
            # echo says nothing of itself: MCP's defaults make it possibly destructive, so it asks
            unsaid = await mcp.call_tool("echo", {"text": "p"})
            assert unsaid.is_error and "awaits approval" in unsaid.content[0].text  # type: ignore[union-attr]

    anyio.run(destructive)
    assert sorted(request.tool_name for request in store.list_requests()) == [
        "files.delete_file",
        "files.echo",
    ]
    # both destructive (one says so, the other by MCP's default): the inbox asks once more
    assert [request.rule.confirm for request in store.list_requests()] == [True, True]


def test_list_changed_passes_through(setup: Setup) -> None:
    seen: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            seen.append(message.method)

    async def main() -> None:
        async with client(setup.stdio(), message_handler=on_message) as mcp:
            await mcp.list_tools()
            await mcp.call_tool("add_tool", {"name": "fresh"})
            while not seen:
                await anyio.sleep(0.05)
            assert "fresh" in await tool_names(mcp)

    anyio.run(main)


def test_list_changed_reaches_a_2026_era_client_on_its_listen_stream(setup: Setup) -> None:
    from mcp.client.subscriptions import ToolsListChanged

    async def main() -> None:
        async with client(setup.stdio(), mode="auto") as mcp:
            assert mcp.protocol_version == "2026-07-28"
            async with mcp.listen(tools_list_changed=True) as subscription:
                assert subscription.honored.tools_list_changed
                await mcp.call_tool("add_tool", {"name": "fresh"})
                with anyio.fail_after(20):
                    event = await subscription.__aiter__().__anext__()
                assert isinstance(event, ToolsListChanged)
            assert "fresh" in await tool_names(mcp)

    anyio.run(main)


def test_upstream_progress_passes_through(setup: Setup) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    async def main() -> None:
        async with client(setup.stdio()) as mcp:
            result = await mcp.call_tool("slow", {"steps": 3}, progress_callback=on_progress)
            assert not result.is_error

    anyio.run(main)
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
