"""--elicit (both protocol eras), the proxy over streamable HTTP (--listen), an upstream over
streamable HTTP (--upstream-url), and a proxy asking through a live signoff server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest

from signoff.decisions import Approve
from signoff.requests import RequestStatus
from signoff.store import SQLiteStore

from ..live import LiveServer
from .harness import Setup, client, listening, pending_request, until, upstream_over_http

pytestmark = pytest.mark.slow


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return Setup(tmp_path)


@pytest.fixture
def store(setup: Setup) -> Any:
    opened = SQLiteStore(setup.db)
    yield opened
    opened.close()


def answering(action: str, content: dict[str, Any] | None, asked: list[str]) -> Any:
    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    return on_elicit


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize(
    ("action", "content"),
    [
        ("accept", {"decision": "approve"}),
        ("decline", None),
        ("accept", {"decision": "reject", "reason": "no"}),
    ],
)
def test_elicit_asks_the_clients_user_in_band(
    setup: Setup, store: SQLiteStore, mode: str, action: str, content: dict[str, Any] | None
) -> None:
    asked: list[str] = []

    async def main() -> None:
        params = setup.stdio("--elicit", "--elicit-as", "carol")
        async with client(params, mode=mode, elicitation_callback=answering(action, content, asked)) as mcp:
            result = await mcp.call_tool("delete_file", {"path": "p"})
            assert mcp.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
        [request] = store.list_requests(tool="files.delete_file")
        assert (request.agent, request.client) == (None, "mcp")  # its clientInfo name (either era): recorded
        assert asked and request.id in asked[0] and "files.delete_file" in asked[0]
        decision = request.decision
        assert decision is not None and decision.actor == "carol" and decision.channel == "mcp-elicit"
        if content == {"decision": "approve"}:
            assert not result.is_error and setup.run_count("delete_file") == 1
            assert request.status is RequestStatus.APPROVED
        else:
            assert result.is_error and "rejected" in result.content[0].text  # type: ignore[union-attr]
            assert request.status is RequestStatus.REJECTED and setup.run_count() == 0

    anyio.run(main)


def test_elicit_falls_back_to_the_inbox_without_client_support(setup: Setup, store: SQLiteStore) -> None:
    async def main() -> None:
        async with (
            client(setup.stdio("--elicit", "--elicit-as", "carol")) as mcp,
            anyio.create_task_group() as tasks,
        ):
            results: list[types.CallToolResult] = []

            async def call() -> None:
                results.append(await mcp.call_tool("delete_file", {"path": "p"}))

            tasks.start_soon(call)
            request = await pending_request(store, tool="files.delete_file")
            store.decide(request.id, Approve(), actor="alice", channel="cli")
        assert not results[0].is_error and setup.run_count("delete_file") == 1

    anyio.run(main)


def test_elicit_refuses_an_agent_as_the_deciding_person(setup: Setup, store: SQLiteStore) -> None:
    import subprocess

    store.add_user("bot", role="agent", actor="test")
    done = subprocess.run(
        [setup.stdio().command, *setup.proxy_args("--elicit", "--elicit-as", "bot")],
        env=setup.proxy_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert "bot is an agent" in done.stderr


@pytest.mark.parametrize("upstream_http", [False, True])
def test_over_streamable_http(setup: Setup, store: SQLiteStore, upstream_http: bool) -> None:
    """The proxy listening (--listen), its upstream a command or itself over HTTP (--upstream-url)."""
    progress: list[str | None] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message)

    async def scenario(url: str) -> None:
        async with client(url) as mcp, anyio.create_task_group() as tasks:
            tools = await mcp.list_tools()
            assert [tool.name for tool in tools.tools] == ["read_file", "write_file", "delete_file"]
            assert tools.next_cursor == "3"
            plain = await mcp.call_tool("read_file", {"path": "r"})
            assert plain.structured_content == {"ran": "read_file", "args": {"path": "r"}}
            results: list[types.CallToolResult] = []

            async def call() -> None:
                results.append(
                    await mcp.call_tool("delete_file", {"path": "d"}, progress_callback=on_progress)
                )

            tasks.start_soon(call)
            request = await pending_request(store, tool="files.delete_file")
            assert request.thread_id.startswith("mcp:files:http-")  # the MCP session's thread
            while not progress:
                await anyio.sleep(0.05)
            store.decide(request.id, Approve(), actor="alice")
        assert not results[0].is_error and setup.run_count("delete_file") == 1

    async def main() -> None:
        if upstream_http:
            async with (
                upstream_over_http(setup) as upstream,
                listening(setup, upstream=["--upstream-url", upstream]) as url,
            ):
                await scenario(url)
        else:
            async with listening(setup) as url:
                await scenario(url)

    anyio.run(main)


def test_through_a_live_server_whose_rules_see_the_annotations(setup: Setup, store: SQLiteStore) -> None:
    """No --config: the gate follows the server's rules (a service asking unless read-only); the
    request is made through the API with the tool's annotations; a person decides on the server."""
    from signoff.rules import RuleSet

    store.replace_rules(
        RuleSet.from_yaml("services:\n  files: {approval_mode: unless_read_only, approvers: [alice]}\n"),
        actor="test",
    )
    with LiveServer(store) as server:
        setup.rules = None
        setup.url = server.url
        setup.token = server.user("mcp-agent", role="agent")
        alice = server.user("alice")

        async def main() -> None:
            async with client(setup.stdio("--max-wait", "1")) as mcp:
                assert not (await mcp.call_tool("read_file", {"path": "r"})).is_error
                waited = await mcp.call_tool("write_file", {"path": "w", "text": "t"})
                text = waited.content[0].text  # type: ignore[union-attr]
                assert waited.is_error and f"{server.url}/requests/" in text and "alice" in text
                request = await pending_request(store, tool="files.write_file")
                assert request.rule.approvers == ("alice",) and request.created_by == "mcp-agent"
                with server.client(alice) as http:
                    answer = http.post(f"/v1/requests/{request.id}/decision", json={"type": "approve"})
                    assert answer.status_code == 200, answer.text
                again = await mcp.call_tool("write_file", {"path": "w", "text": "t"})
                assert not again.is_error
            assert setup.run_count("write_file") == 1 and setup.run_count("read_file") == 1
            done = await until(store, lambda r: r.status is RequestStatus.APPROVED, tool="files.write_file")
            execution = store.get_execution(done.id)
            assert execution is not None and execution.status.value == "succeeded"

        anyio.run(main)
