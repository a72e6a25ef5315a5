"""Rules declared in code are visible to the server (issue 8, item 22): each request keeps the
rule it was asked under and where it came from, the request page says so, and the Rules page
lists the tools agents declared in their code."""

from __future__ import annotations

from pathlib import Path

from signoff import Backend, Gate, Pending, RuleSet, Scope, ToolCall
from signoff.client import Client
from signoff.rules.model import RuleOrigin
from signoff.store import Store

from .conftest import AGENT_USER
from .live import LiveServer

RULES = RuleSet.from_dict(
    {"tools": {"deploy": {"requires_approval": True, "allowed_decisions": ["approve"]}}}
)


def pending(gate: Gate, tool: str, call_id: str) -> Pending:
    found = gate.submit(ToolCall(name=tool, args={"env": "prod"}, id=call_id), Scope(thread_id="t1"))
    assert isinstance(found, Pending)
    return found


def test_a_local_gate_records_where_each_rule_came_from(store: Store, tmp_path: Path) -> None:
    rules_file = tmp_path / "rules.yaml"
    rules_file.write_text(RULES.to_yaml())
    in_code = Gate(store, rules=RULES)
    in_code.register_tool("wire", RULES.tools["deploy"])
    from_file = Gate(store, rules=rules_file)
    from_store = Gate(store)
    store.set_layer("tool", "deploy", {"requires_approval": True}, actor="ops")

    def origin(gate: Gate, tool: str, call_id: str) -> RuleOrigin | None:
        return pending(gate, tool, call_id).request.rule.origin

    assert origin(in_code, "deploy", "a") == RuleOrigin(source="code", layer="tool", key="deploy")
    assert origin(in_code, "wire", "b") == RuleOrigin(source="code", layer="tool", key="wire")
    assert origin(from_file, "deploy", "c") == RuleOrigin(
        source="file", layer="tool", key="deploy", path=str(rules_file)
    )
    assert origin(from_store, "deploy", "d") == RuleOrigin(source="store", layer="tool", key="deploy")
    from_store.register_tool("wire", RULES.tools["deploy"])
    assert origin(from_store, "wire", "e") == RuleOrigin(source="code", layer="tool", key="wire")
    reread = store.find_request("t1", "c")
    assert reread is not None
    assert reread.rule.origin == RuleOrigin(source="file", layer="tool", key="deploy", path=str(rules_file))


def test_through_a_server_the_origin_says_whose_rules_decide(backend: Backend, store: Store) -> None:
    gate = Gate(backend, rules_refresh=0)
    gate.register_tool("deploy", RULES.tools["deploy"])
    first = pending(gate, "deploy", "c1").request.rule.origin
    store.set_layer("tool", "deploy", {"requires_approval": True, "approvers": ["alice"]}, actor="ops")
    second = pending(gate, "deploy", "c2").request
    if isinstance(backend, Client):
        assert first == RuleOrigin(source="code", layer="tool", key="deploy", authority="agent")
        assert second.rule.origin == RuleOrigin(
            source="server", layer="tool", key="deploy", authority="server"
        )
    else:
        assert first == RuleOrigin(source="code", layer="tool", key="deploy")
        assert second.rule.origin == RuleOrigin(source="store", layer="tool", key="deploy")
    assert second.rule.approvers == ("alice",)


def test_the_server_lists_the_rules_agents_declared_in_code(live_server: LiveServer, store: Store) -> None:
    with Client(live_server.url, live_server.user(AGENT_USER, role="agent")) as backend:
        gate = Gate(backend)

        @gate.guard(allowed_decisions=["approve", "reject"])
        def deploy(env: str) -> str:
            return f"deployed to {env}"

        with gate.scope(thread_id="t1", agent="ops-bot"):
            assert isinstance(gate.submit(ToolCall(name="deploy", args={"env": "prod"}, id="c1")), Pending)
    alice = live_server.user("alice")
    with live_server.client(alice) as person:
        [declared] = person.get("/v1/rules/declared").json()
        assert (declared["tool"], declared["created_by"], declared["agent"]) == (
            "deploy",
            AGENT_USER,
            "ops-bot",
        )
        assert declared["rule"]["origin"] == {"source": "code", "layer": "tool", "key": "deploy"}
        assert declared["rule"]["allowed_decisions"] == ["approve", "reject"]
        assert declared["decides"] == "agent"
        page = person.get("/rules").text
        assert "Declared in agents' code" in page
        assert "declared in the agent&#39;s code (tool deploy)" in page
        store.set_layer("tool", "deploy", {"requires_approval": True}, actor="ops")
        assert person.get("/v1/rules/declared").json()[0]["decides"] == "server"
    with live_server.client(live_server.user("other-bot", "agent")) as other:
        assert other.get("/v1/rules/declared").json() == []  # an agent sees only its own


def test_the_request_page_shows_the_rule_it_was_asked_under(live_server: LiveServer, store: Store) -> None:
    rules_file_origin = {"source": "file", "layer": "tool", "key": "deploy", "path": "agent/rules.yaml"}
    with live_server.client(live_server.user("bot", "agent")) as bot:
        body = {"thread_id": "t1", "tool": "deploy", "args": {}}
        theirs = bot.post(
            "/v1/requests", json={**body, "tool_call_id": "c1", "rule": {"origin": rules_file_origin}}
        ).json()["id"]
        store.set_layer("tool", "deploy", {"requires_approval": True}, actor="ops")
        servers = bot.post("/v1/requests", json={**body, "tool_call_id": "c2"}).json()["id"]
    with live_server.client(live_server.user("alice")) as person:
        page = person.get(f"/requests/{theirs}").text
        assert "the agent&#39;s rules file agent/rules.yaml (tool deploy)" in page
        assert "the agent&#39;s own rule: this server&#39;s rules do not cover the tool" in page
        page = person.get(f"/requests/{servers}").text
        assert "this server&#39;s rules (tool deploy)" in page


def test_rules_are_not_noted_again_for_every_request(live_server: LiveServer, store: Store) -> None:
    with live_server.client(live_server.user("bot", "agent")) as bot:
        for n in range(3):
            body = {"thread_id": "t1", "tool_call_id": f"c{n}", "tool": "deploy", "rule": {"quorum": 1}}
            assert bot.post("/v1/requests", json=body).status_code == 201
    [declared] = store.declared_rules()
    assert declared.first_seen == declared.last_seen  # written once: for the first request
