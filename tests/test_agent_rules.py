"""An agent's rule snapshot does not override the server's rules (issue 8, item 16).

Whether to ask is the agent's call; who decides, the quorum, unattended handling, the deadline
and on_expire come from the server's rules wherever they cover the tool, and from the agent's
snapshot only where they don't and the server takes agents' rules (`--agent-rules allow|deny`).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from signoff import ApprovalRequiredUnattended, AutoResumeExceeded, Gate, RuleSet, Scope, ToolCall
from signoff.cli import app
from signoff.client import Client
from signoff.requests import Request, RequestStatus
from signoff.server import ServerSettings
from signoff.store import Store

from .live import LiveServer

AGENTS_RULE = {
    "approvers": ["mallory"],
    "quorum": 1,
    "on_expire": "approve",
    "unattended": "approve",
    "allowed_decisions": ["approve", "edit", "reject"],
    "redact": ["token"],
}
SERVERS_RULE = {
    "requires_approval": True,
    "approvers": ["alice", "bob"],
    "quorum": 2,
    "deadline": "1h",
    "on_expire": "reject",
    "unattended": "reject",
    "allowed_decisions": ["approve", "reject"],
    "redact": ["password"],
}


def ask(client: httpx.Client, call_id: str = "c1", **fields: Any) -> httpx.Response:
    body = {"thread_id": "t1", "tool_call_id": call_id, "tool": "deploy", "args": {"env": "prod"}, **fields}
    return client.post("/v1/requests", json=body)


def lasts(request: Request) -> timedelta:
    """How long the request may wait, to the second."""
    return timedelta(seconds=round((request.deadline - request.created_at).total_seconds()))


def error_of(response: httpx.Response) -> tuple[int, str, str]:
    error = response.json()["error"]
    return response.status_code, error["type"], error["message"]


@pytest.fixture
def bot(live_server: LiveServer) -> Iterator[httpx.Client]:
    with live_server.client(live_server.user("bot", "agent")) as client:
        yield client


def test_a_snapshot_with_an_unknown_key_or_a_bad_value_is_refused_and_nothing_is_stored(
    bot: httpx.Client, store: Store
) -> None:
    typo = ask(bot, rule={"approver": ["alice"]})
    assert error_of(typo)[:2] == (422, "InvalidInput")
    assert "rule has no field 'approver'" in error_of(typo)[2]
    refused = {
        "quorum": ("2", "rule.quorum must be a whole number from 1 to 100"),
        "approvers": ("alice", "rule.approvers must be a list of non-empty strings"),
        "redact": ([""], "rule.redact must be a list of non-empty strings"),
        "allowed_decisions": (["approve", "maybe"], "rule.allowed_decisions must name approve"),
        "unattended": ("sometimes", "rule.unattended must be approve, reject or fail, not 'sometimes'"),
        "origin": ({"source": "admin"}, "rule.origin.source must be code, file, store, server or agent"),
    }
    for field, (value, message) in refused.items():
        response = ask(bot, rule={field: value})
        assert response.status_code == 422, field
        assert message in error_of(response)[2], field
    assert ask(bot, rule={"quorum": True}).status_code == 422
    claimed = ask(bot, rule={"origin": {"source": "code", "authority": "server"}})
    assert "authority is the server's to say" in error_of(claimed)[2]
    assert "control" in error_of(ask(bot, rule={"approvers": ["ali\u202ece"]}))[2]
    assert store.list_requests() == []


def test_where_the_servers_rules_cover_the_tool_they_decide_who_decides_and_how(
    bot: httpx.Client, store: Store
) -> None:
    store.set_layer("tool", "deploy", SERVERS_RULE, actor="admin")
    body = ask(bot, rule=AGENTS_RULE, deadline="7d").json()
    request = store.get_request(body["id"])
    rule = request.rule
    assert rule.approvers == ("alice", "bob")
    assert (rule.quorum, rule.on_expire, rule.unattended) == (2, "reject", "reject")
    assert rule.allowed_decisions == ("approve", "reject")  # what both allow
    assert set(rule.redact) == {"password", "token"}  # what either masks
    assert lasts(request) == timedelta(hours=1)
    assert rule.origin is not None
    origin = {"source": "server", "layer": "tool", "key": "deploy", "authority": "server"}
    assert rule.origin.to_dict() == origin
    assert body["rule_origin"] == rule.origin.to_dict()


def test_where_they_do_not_the_agents_rule_applies_by_default(bot: httpx.Client, store: Store) -> None:
    origin = {"source": "code", "layer": "tool", "key": "deploy"}
    body = ask(bot, rule={**AGENTS_RULE, "origin": origin}, deadline="2h").json()
    request = store.get_request(body["id"])
    assert request.rule.approvers == ("mallory",)
    assert (request.rule.on_expire, request.rule.unattended) == ("approve", "approve")
    assert lasts(request) == timedelta(hours=2)
    assert request.rule.origin is not None
    assert request.rule.origin.to_dict() == {**origin, "authority": "agent"}


def test_with_agent_rules_denied_the_servers_defaults_apply(store: Store) -> None:
    defaults = {"deadline": "3h", "on_expire": "reject", "unattended": "fail"}
    store.set_layer("defaults", "", defaults, actor="admin")
    with LiveServer(store, ServerSettings(sweep_interval=0.2, agent_rules="deny")) as server:
        bot = server.client(server.user("bot", "agent"))
        body = ask(bot, rule=AGENTS_RULE, deadline="7d", approvers=["mallory"]).json()
        bot.close()
    request = store.get_request(body["id"])
    assert request.rule.approvers == ()  # any person
    assert (request.rule.quorum, request.rule.on_expire, request.rule.unattended) == (1, "reject", "fail")
    assert lasts(request) == timedelta(hours=3)
    assert request.rule.allowed_decisions == ("approve", "edit", "reject")  # still the agent's call
    assert request.rule.origin is not None
    assert request.rule.origin.authority == "server"


def test_an_unattended_self_approval_follows_the_servers_rule_and_cap(
    bot: httpx.Client, store: Store
) -> None:
    store.set_layer("tool", "deploy", {"requires_approval": True, "unattended": "reject"}, actor="admin")
    store.set_layer("tool", "wire", {"requires_approval": True, "unattended": "fail"}, actor="admin")
    store.set_layer("defaults", "", {"max_auto_resume": 2}, actor="admin")

    def auto(request_id: str, kind: str) -> httpx.Response:
        return bot.post(f"/v1/requests/{request_id}/decision", json={"type": kind, "on_behalf": "unattended"})

    first = ask(bot, "c1", rule={"unattended": "approve"}).json()["id"]
    refused = auto(first, "approve")
    assert error_of(refused) == (
        403,
        "PermissionDenied",
        f"the rule of request {first} says unattended runs are rejected",
    )
    edit = bot.post(
        f"/v1/requests/{first}/decision", json={"type": "edit", "args": {}, "on_behalf": "unattended"}
    )
    assert error_of(edit)[:2] == (403, "PermissionDenied")
    assert auto(first, "reject").status_code == 200
    wire = ask(bot, "c2", tool="wire").json()["id"]
    assert "unattended runs fail" in error_of(auto(wire, "reject"))[2]
    assert store.get_request(wire).status is RequestStatus.PENDING
    second = ask(bot, "c3").json()["id"]
    assert auto(second, "reject").status_code == 200
    third = ask(bot, "c4").json()["id"]
    exceeded = ("AutoResumeExceeded", "HITL auto-resume exceeded 2 attempts")
    assert error_of(auto(third, "reject"))[1:] == exceeded
    assert store.get_request(third).status is RequestStatus.PENDING


def test_a_remote_gate_follows_the_servers_unattended_rule(live_server: LiveServer, store: Store) -> None:
    store.set_layer("tool", "deploy", {"requires_approval": True, "unattended": "reject"}, actor="admin")
    store.set_layer("tool", "wire", {"requires_approval": True, "unattended": "fail"}, actor="admin")
    own = RuleSet.from_dict({"tools": {name: {"requires_approval": True} for name in ("deploy", "wire")}})
    cron = Scope(thread_id="cron", unattended=True)
    with Client(live_server.url, live_server.user("bot", "agent")) as backend:
        gate = Gate(backend, rules=own)
        outcome = gate.review(ToolCall(name="deploy", args={}, id="d1"), cron)
        assert (outcome.status, outcome.execute) == ("rejected", False)
        with pytest.raises(ApprovalRequiredUnattended):
            gate.review(ToolCall(name="wire", args={}, id="w1"), cron)
    [wired] = store.list_requests(tool="wire")
    assert wired.status is RequestStatus.CANCELLED  # nobody is left waiting for a person


def test_the_servers_cap_reaches_a_remote_gate_as_auto_resume_exceeded(
    live_server: LiveServer, store: Store
) -> None:
    store.set_layer("defaults", "", {"max_auto_resume": 1}, actor="admin")
    store.set_layer("tool", "deploy", {"requires_approval": True}, actor="admin")
    own = RuleSet.from_dict({"tools": {"deploy": {"requires_approval": True}}})
    cron = Scope(thread_id="cron", unattended=True)
    with Client(live_server.url, live_server.user("bot", "agent")) as backend:
        gate = Gate(backend, rules=own, max_auto_resume=10)  # the gate's own cap would allow more
        assert gate.review(ToolCall(name="deploy", args={}, id="d1"), cron).execute
        with pytest.raises(AutoResumeExceeded) as exceeded:
            gate.review(ToolCall(name="deploy", args={}, id="d2"), cron)
    assert exceeded.value.limit == 1
    assert exceeded.value.message == "HITL auto-resume exceeded 1 attempts"


def test_serve_takes_agent_rules_allow_or_deny(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    import uvicorn

    started: list[Any] = []

    def run(server: uvicorn.Server, sockets: list[Any] | None = None) -> None:
        started.append(server.config.app)
        server.started = True
        for sock in sockets or ():
            sock.close()

    monkeypatch.setattr(uvicorn.Server, "run", run)
    runner = CliRunner()
    db = f"sqlite:///{tmp_path / 'serve.db'}"
    assert runner.invoke(app, ["serve", "--db", db]).exit_code == 0
    assert runner.invoke(app, ["serve", "--db", db, "--agent-rules", "deny"]).exit_code == 0
    assert [started_app.state.server.settings.agent_rules for started_app in started] == ["allow", "deny"]
    wrong = runner.invoke(app, ["serve", "--db", db, "--agent-rules", "maybe"])
    assert wrong.exit_code == 2


def test_the_servers_cap_counts_rounds_too(live_server: LiveServer, store: Store) -> None:
    store.set_layer("defaults", "", {"max_auto_resume": 1}, actor="admin")
    store.set_layer("tool", "deploy", {"requires_approval": True}, actor="admin")
    own = RuleSet.from_dict({"tools": {"deploy": {"requires_approval": True}}})
    cron = Scope(thread_id="cron", unattended=True)
    with Client(live_server.url, live_server.user("bot", "agent")) as backend:
        gate = Gate(backend, rules=own, max_auto_resume=10)  # the gate's own cap would allow more
        for n in range(3):
            assert gate.review(ToolCall(name="deploy", args={"n": n}, id=f"d{n}", round="m1"), cron).execute
        with pytest.raises(AutoResumeExceeded) as exceeded:
            gate.review(ToolCall(name="deploy", args={}, id="e1", round="m2"), cron)
        assert backend.count_auto_rounds("cron") == 1
        assert backend.count_auto_rounds("cron", besides="m1") == 0
    assert exceeded.value.message == "HITL auto-resume exceeded 1 attempts"
    assert [r.round for r in store.list_requests(thread_id="cron", status="approved")] == ["m1"] * 3
