"""The proxy fails closed (issue 17): a service nothing configures asks before every tool, and
the proxy says on stderr what it gates and what it passes; the agent whose rules apply is the
proxy's own, never the name the MCP client gives itself.

Real processes: `signoff mcp-proxy` over stdio (spoken to in JSON-RPC lines, or by the official
client), the test upstream, and for one test a live signoff server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from signoff.decisions import Reject
from signoff.requests import RequestStatus
from signoff.rules import RuleSet
from signoff.store import SQLiteStore

from ..live import LiveServer
from .harness import RawProxy, Setup, eventually, text_of

pytestmark = pytest.mark.slow

ALL_TOOLS = "add_tool, crash, delete_file, echo, hang, read_file, slow, wait_for, write_file"


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return Setup(tmp_path, rules=None)  # no --config: the store's rules, of which there are none


@pytest.fixture
def store(setup: Setup) -> Any:
    opened = SQLiteStore(setup.db)
    yield opened
    opened.close()


def waits(proxy: RawProxy, tool: str, args: dict[str, Any]) -> bool:
    """Whether the call was held for a person (--max-wait answered "awaits approval")."""
    result = proxy.call(tool, args)
    return bool(result.get("isError")) and "awaits approval" in text_of(result)


def test_with_no_rules_every_tool_asks_and_the_proxy_says_so(setup: Setup, store: SQLiteStore) -> None:
    proxy = RawProxy(setup, "--max-wait", "0.3")
    try:
        assert waits(proxy, "delete_file", {"path": "p"})
        assert waits(proxy, "read_file", {"path": "p"}), "read-only by its own word, still asked"
        said = proxy.said()
    finally:
        proxy.close()
    assert setup.run_count() == 0
    assert sorted(request.tool_name for request in store.list_requests()) == [
        "files.delete_file",
        "files.read_file",
    ]
    [origin] = {request.rule.origin for request in store.list_requests()}
    assert origin is not None and (origin.source, origin.layer, origin.key) == ("code", "service", "files")
    assert f"signoff mcp-proxy files: asks a person before {ALL_TOOLS}" in said
    assert "signoff mcp-proxy files: passes unasked no tool" in said
    assert "trusts the upstream's own annotations" not in said


@pytest.mark.parametrize(
    ("service", "asked", "passed"),
    [
        ("{approval_mode: whitelist, tools: [delete_file]}", ["delete_file"], ["write_file"]),
        ("{requires_approval: false}", [], ["delete_file", "write_file"]),
        ("{description: 'Files: {tool_name}'}", ["delete_file", "write_file"], []),  # mode left as declared
    ],
    ids=["whitelist", "turned-off", "mode-unset"],
)
def test_the_rules_own_service_entry_overrides_the_declaration_field_by_field(
    setup: Setup, store: SQLiteStore, service: str, asked: list[str], passed: list[str]
) -> None:
    store.replace_rules(RuleSet.from_yaml(f"services:\n  files: {service}\n"), actor="test")
    proxy = RawProxy(setup, "--max-wait", "0.3")
    try:
        calls = {"delete_file": {"path": "p"}, "write_file": {"path": "p", "text": "t"}}
        held = {tool: waits(proxy, tool, args) for tool, args in calls.items()}
        said = proxy.said()
    finally:
        proxy.close()
    assert sorted(tool for tool, waited in held.items() if waited) == asked
    assert setup.run_count() == len(passed)
    for tool in passed:
        assert tool in said.split("passes unasked ", 1)[1].splitlines()[0]


def test_unless_read_only_is_opt_in_and_said_to_trust_the_annotations(setup: Setup) -> None:
    setup.rules = "services:\n  files: {approval_mode: unless_read_only}\n"
    proxy = RawProxy(setup, "--max-wait", "0.3")
    try:
        assert not proxy.call("read_file", {"path": "p"}).get("isError")
        assert waits(proxy, "echo", {"text": "t"}), "a tool that says nothing of itself asks"
        said = proxy.said()
    finally:
        proxy.close()
    assert (
        "signoff mcp-proxy files: approval_mode unless_read_only trusts the upstream's own annotations: "
        "passes unasked what it marks readOnlyHint: read_file, slow" in said
    )
    assert setup.run_count("read_file") == 1 and setup.run_count("echo") == 0


def test_a_changed_tool_list_is_said_briefly(setup: Setup) -> None:
    setup.rules = "tools:\n  files.add_tool: {requires_approval: false}\n"
    proxy = RawProxy(setup)
    try:
        assert not proxy.call("add_tool", {"name": "fresh"}).get("isError")
        eventually(lambda: "now asks before fresh" in proxy.said())
        said = proxy.said()
    finally:
        proxy.close()
    assert "signoff mcp-proxy files: the upstream's tools changed: now asks before fresh" in said
    assert said.count("asks a person before") == 1, "the full list only at start-up"


# -- whose rules apply --------------------------------------------------------------------------

NIGHTLY_OFF = "agents:\n  nightly: {hitl_disabled: true}\n"


def test_a_client_naming_itself_after_a_silenced_agent_is_still_asked(
    setup: Setup, store: SQLiteStore
) -> None:
    store.replace_rules(RuleSet.from_yaml(NIGHTLY_OFF), actor="test")
    proxy = RawProxy(setup, "--max-wait", "0.3", client_name="nightly")
    try:
        assert waits(proxy, "delete_file", {"path": "p"})
    finally:
        proxy.close()
    [request] = store.list_requests()
    assert (request.agent, request.client) == (None, "nightly")
    assert setup.run_count() == 0


def test_the_proxys_own_agent_is_whose_rules_apply(setup: Setup, store: SQLiteStore) -> None:
    store.replace_rules(RuleSet.from_yaml(NIGHTLY_OFF), actor="test")
    proxy = RawProxy(setup, "--agent", "nightly", client_name="someone-else")
    try:
        assert not proxy.call("delete_file", {"path": "p"}).get("isError")
        said = proxy.said()
    finally:
        proxy.close()
    assert store.list_requests() == [] and setup.run_count("delete_file") == 1
    assert "signoff mcp-proxy files (agent nightly): asks a person before no tool" in said


def test_initialize_sent_again_mid_session_changes_nothing(setup: Setup, store: SQLiteStore) -> None:
    store.replace_rules(RuleSet.from_yaml(NIGHTLY_OFF), actor="test")
    proxy = RawProxy(setup, client_name="desk")
    try:
        proxy.ask("initialize", _initialize_params("nightly"))  # whatever the SDK answers
        call = proxy.start("tools/call", {"name": "delete_file", "arguments": {"path": "p"}})
        [request] = eventually(lambda: store.list_requests(status="pending"))
        assert request.agent is None and request.tool_name == "files.delete_file"
        store.decide(request.id, Reject(message="no"), actor="alice")
        answer = proxy.answer(call)
    finally:
        proxy.close()
    assert answer["result"]["isError"] and "no" in text_of(answer["result"])
    assert setup.run_count() == 0


def _initialize_params(name: str) -> dict[str, Any]:
    return {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": name, "version": "2"}}


def test_through_a_server_the_agent_is_the_tokens_user_and_the_declaration_holds(
    setup: Setup, store: SQLiteStore
) -> None:
    """No service rule on the server: the proxy's declaration asks; a client calling itself after
    an agent the server silences changes nothing; the request is the token user's."""
    store.replace_rules(RuleSet.from_yaml(NIGHTLY_OFF), actor="test")
    with LiveServer(store) as server:
        setup.url = server.url
        setup.token = server.user("mcp-agent", role="agent")
        proxy = RawProxy(setup, "--max-wait", "0.5", client_name="nightly")
        try:
            assert waits(proxy, "delete_file", {"path": "p"})
            said = proxy.said()
        finally:
            proxy.close()
        [request] = store.list_requests()
        assert (request.agent, request.created_by, request.client) == ("mcp-agent", "mcp-agent", "nightly")
        assert request.status is RequestStatus.PENDING and setup.run_count() == 0
        assert "signoff mcp-proxy files (agent mcp-agent): asks a person before" in said
        with server.client(server.user("alice")) as alice:
            card = alice.get(f"/v1/requests/{request.id}").json()
        assert card["client"] == "nightly"
