"""Seed 004's tables as rule-resolution cases.

"典型场景速查" (typical scenarios): each row's recommended configuration, and who is asked.
"关键语义：OR 合并" (OR merge of the silence switches): each row of the agent × app table.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import pytest

from signoff import Gate, Pending, RuleSet, Scope, Store, ToolCall
from signoff.rules import Resolver


@dataclass(frozen=True)
class Expect:
    tool: str
    agent: str | None
    app: str | None
    ask: bool
    layer: str


def check(rules: RuleSet, expectations: list[Expect]) -> None:
    resolver = Resolver(rules)
    for expected in expectations:
        found = resolver.explain(expected.tool, expected.agent, expected.app)
        assert (found.ask, found.layer) == (expected.ask, expected.layer), (
            f"{expected.tool} for agent={expected.agent} app={expected.app}: "
            f"got ask={found.ask} layer={found.layer}, trace={[s.to_dict() for s in found.trace]}"
        )


# -- 典型场景速查: the typical-scenarios table ------------------------------------------------

SCENARIOS: list[tuple[str, str, list[Expect]]] = [
    (
        # 某工具天生危险，所有用户都拦 → MCP 工具层 requires_approval=true
        "tool-inherently-dangerous",
        """
        tools:
          delete_db: {requires_approval: true}
        agents:
          support: {interrupt_on: {send_email: true}}
          devops: {}
        apps:
          acme: {}
        """,
        [
            Expect("delete_db", None, None, True, "tool"),
            Expect("delete_db", "support", None, True, "tool"),
            Expect("delete_db", "devops", "acme", True, "tool"),
            Expect("delete_db", "unknown-agent", "unknown-app", True, "tool"),
            Expect("ls", "support", "acme", False, "default"),
        ],
    ),
    (
        # 本编排器调试期间不要 HITL → 编排器 hitl_disabled=true
        "agent-debugging-hitl-disabled",
        """
        tools:
          delete_db: {requires_approval: true}
        agents:
          debug-bot:
            hitl_disabled: true
            interrupt_on: {send_email: true}
          support: {interrupt_on: {send_email: true}}
        """,
        [
            Expect("delete_db", "debug-bot", None, False, "agent.hitl_disabled"),
            Expect("send_email", "debug-bot", None, False, "agent.hitl_disabled"),
            Expect("delete_db", "debug-bot", "acme", False, "agent.hitl_disabled"),
            Expect("delete_db", "support", None, True, "tool"),
            Expect("send_email", "support", None, True, "agent"),
        ],
    ),
    (
        # 本编排器整体审批 + 个别工具例外 → 工具层标 + 编排器 per-tool false
        "agent-approves-all-but-exceptions",
        """
        tools:
          send_email: {requires_approval: true}
          execute: {requires_approval: true}
          ls: {requires_approval: true}
        agents:
          devops: {interrupt_on: {ls: false, send_email: false}}
        """,
        [
            Expect("execute", "devops", None, True, "tool"),
            Expect("ls", "devops", None, False, "agent"),
            Expect("send_email", "devops", None, False, "agent"),
            Expect("ls", "support", None, True, "tool"),
            Expect("send_email", None, None, True, "tool"),
        ],
    ),
    (
        # 同编排器多应用，部分应用静默 → 应用层 hitl_disabled=true
        "same-agent-several-apps-some-silent",
        """
        tools:
          delete_db: {requires_approval: true}
        agents:
          support: {interrupt_on: {send_email: true}}
        apps:
          acme-dev: {hitl_disabled: true}
          acme-prod: {}
        """,
        [
            Expect("send_email", "support", "acme-dev", False, "app.hitl_disabled"),
            Expect("delete_db", "support", "acme-dev", False, "app.hitl_disabled"),
            Expect("send_email", "support", "acme-prod", True, "agent"),
            Expect("delete_db", "support", "acme-prod", True, "tool"),
            Expect("send_email", "support", None, True, "agent"),
        ],
    ),
    (
        # 同编排器多应用，部分应用更严 → 应用层 interrupt_overrides 加新规则
        "same-agent-several-apps-some-stricter",
        """
        tools:
          delete_db: {requires_approval: true}
        agents:
          support: {interrupt_on: {delete_db: false, send_email: true}}
        apps:
          bank:
            interrupt_overrides:
              delete_db: {allowed_decisions: [approve, reject]}
              transfer_money: true
          shop: {}
        """,
        [
            Expect("delete_db", "support", "bank", True, "app"),
            Expect("transfer_money", "support", "bank", True, "app"),
            Expect("send_email", "support", "bank", True, "agent"),
            Expect("delete_db", "support", "shop", False, "agent"),
            Expect("transfer_money", "support", "shop", False, "default"),
        ],
    ),
    (
        # 紧急关停某编排器 HITL → 编排器层 hitl_disabled 开关一秒生效
        "emergency-stop-agent-hitl-disabled",
        """
        tools:
          delete_db: {requires_approval: true}
        agents:
          runaway:
            hitl_disabled: true
            interrupt_on: {"*": true}
        apps:
          acme:
            interrupt_overrides: {delete_db: true}
        """,
        [
            Expect("delete_db", "runaway", "acme", False, "agent.hitl_disabled"),
            Expect("anything", "runaway", None, False, "agent.hitl_disabled"),
            Expect("delete_db", "other", "acme", True, "app"),
        ],
    ),
    (
        # 单测 / e2e 跑主路径 → 测试用 application 加 hitl_disabled=true
        "tests-e2e-app-hitl-disabled",
        """
        tools:
          delete_db: {requires_approval: true}
        agents:
          support: {interrupt_on: {send_email: true}}
        apps:
          e2e: {hitl_disabled: true, interrupt_overrides: {send_email: true}}
          prod: {}
        """,
        [
            Expect("delete_db", "support", "e2e", False, "app.hitl_disabled"),
            Expect("send_email", "support", "e2e", False, "app.hitl_disabled"),
            Expect("delete_db", "support", "prod", True, "tool"),
            Expect("send_email", "support", "prod", True, "agent"),
        ],
    ),
]


@pytest.mark.parametrize(
    ("yaml_text", "expectations"),
    [pytest.param(text, expected, id=row) for row, text, expected in SCENARIOS],
)
def test_typical_scenario(yaml_text: str, expectations: list[Expect]) -> None:
    check(RuleSet.from_yaml(yaml_text), expectations)


def test_stricter_app_keeps_its_fields_and_approve() -> None:
    """The stricter app's mapping turns delete_db on with its own allowed_decisions."""
    yaml_text = next(text for row, text, _ in SCENARIOS if row == "same-agent-several-apps-some-stricter")
    resolver = Resolver(RuleSet.from_yaml(yaml_text))
    assert resolver.explain("delete_db", "support", "bank").allowed_decisions == ("approve", "reject")
    assert resolver.explain("transfer_money", "support", "bank").allowed_decisions == (
        "approve",
        "edit",
        "reject",
        "respond",
    )
    assert resolver.explain("delete_db", "support", "shop").allowed_decisions == ()


def test_emergency_stop_is_a_switch_flip() -> None:
    """Before the switch the agent's calls ask; flipping only hitl_disabled silences all of them."""
    before = RuleSet.from_yaml(
        """
        tools: {delete_db: {requires_approval: true}}
        agents: {runaway: {interrupt_on: {send_email: true}}}
        """
    )
    after = RuleSet.from_dict(
        {
            **before.to_dict(),
            "agents": {"runaway": {"hitl_disabled": True, "interrupt_on": {"send_email": True}}},
        }
    )
    check(
        before,
        [
            Expect("delete_db", "runaway", None, True, "tool"),
            Expect("send_email", "runaway", None, True, "agent"),
        ],
    )
    check(
        after,
        [
            Expect("delete_db", "runaway", None, False, "agent.hitl_disabled"),
            Expect("send_email", "runaway", None, False, "agent.hitl_disabled"),
            Expect("delete_db", "someone-else", None, True, "tool"),
        ],
    )


def test_emergency_stop_through_rules_in_the_store(store: Store) -> None:
    """`store.set_layer` from an operator: a gate following the store's rules sees it at once."""
    store.set_layer("tool", "delete_db", {"requires_approval": True}, actor="ops")
    gate = Gate(store, rules_refresh=0)
    scope = Scope(thread_id="run-1", agent="runaway")

    assert gate.explain("delete_db", agent="runaway").ask is True
    first = gate.submit(ToolCall(name="delete_db", args={"target": "users"}, id="c1"), scope)
    assert isinstance(first, Pending)

    store.set_layer("agent", "runaway", {"hitl_disabled": True}, actor="ops")

    explained = gate.explain("delete_db", agent="runaway")
    assert (explained.ask, explained.layer) == (False, "agent.hitl_disabled")
    second = gate.submit(ToolCall(name="delete_db", args={"target": "orders"}, id="c2"), scope)
    assert not isinstance(second, Pending)
    assert second.execute is True
    assert second.status == "not_required"
    assert second.final_tool_params == {"target": "orders"}
    assert store.find_request("run-1", "c2") is None
    # other agents are untouched
    assert gate.explain("delete_db", agent="support").ask is True

    # and switching it back on is just as quick
    store.set_layer("agent", "runaway", {"hitl_disabled": False}, actor="ops")
    assert gate.explain("delete_db", agent="runaway").ask is True


def test_store_rule_change_is_seen_within_rules_refresh(sqlite_store: Store) -> None:
    sqlite_store.set_layer("tool", "delete_db", {"requires_approval": True}, actor="ops")
    refresh = 0.3
    gate = Gate(sqlite_store, rules_refresh=refresh)
    assert gate.explain("delete_db", agent="runaway").ask is True
    changed_at = time.monotonic()
    sqlite_store.set_layer("agent", "runaway", {"hitl_disabled": True}, actor="ops")
    while gate.explain("delete_db", agent="runaway").ask:
        assert time.monotonic() - changed_at < refresh + 0.5, "the change was not seen within rules_refresh"
        time.sleep(0.01)
    assert gate.explain("delete_db", agent="runaway").layer == "agent.hitl_disabled"


def test_e2e_app_runs_the_main_path_without_requests(sqlite_store: Store) -> None:
    rules = RuleSet.from_yaml(
        """
        tools: {delete_db: {requires_approval: true}}
        apps: {e2e: {hitl_disabled: true}}
        """
    )
    gate = Gate(sqlite_store, rules=rules)
    outcome = gate.review(
        ToolCall(name="delete_db", args={"target": "tmp"}, id="c1"), Scope(thread_id="e2e-run", app="e2e")
    )
    assert outcome.execute is True
    assert outcome.status == "not_required"
    assert outcome.request_id is None
    assert sqlite_store.list_requests(thread_id="e2e-run") == []
    pending = gate.submit(
        ToolCall(name="delete_db", args={"target": "tmp"}, id="c1"), Scope(thread_id="prod-run", app="prod")
    )
    assert isinstance(pending, Pending)


# -- 关键语义：OR 合并: the silence switches ---------------------------------------------------

BASE: dict[str, Any] = {"tools": {"delete_db": {"requires_approval": True}}}


def rules_with(agent: dict[str, Any] | None, app: dict[str, Any] | None) -> RuleSet:
    data: dict[str, Any] = dict(BASE)
    if agent is not None:
        data["agents"] = {"bot": agent}
    if app is not None:
        data["apps"] = {"tenant": app}
    return RuleSet.from_dict(data)


OR_MERGE = [
    # 编排器 静默 / 应用 不管 → 静默
    pytest.param({"hitl_disabled": True}, None, False, "agent.hitl_disabled", id="agent-silent-app-unset"),
    pytest.param(
        {"hitl_disabled": True}, {}, False, "agent.hitl_disabled", id="agent-silent-app-empty-entry"
    ),
    pytest.param(
        {"hitl_disabled": True},
        {"hitl_disabled": False},
        False,
        "agent.hitl_disabled",
        id="agent-silent-app-not-silent",
    ),
    # 编排器 不管 / 应用 静默 → 静默
    pytest.param(None, {"hitl_disabled": True}, False, "app.hitl_disabled", id="agent-unset-app-silent"),
    pytest.param(
        {"interrupt_on": {"delete_db": True}},
        {"hitl_disabled": True},
        False,
        "app.hitl_disabled",
        id="agent-asks-app-silent",
    ),
    # 都静默 → 静默
    pytest.param(
        {"hitl_disabled": True},
        {"hitl_disabled": True},
        False,
        "agent.hitl_disabled",
        id="both-silent",
    ),
    # 编排器 静默 / 应用 显式开 → 仍然静默 (the app cannot override the agent's silence)
    pytest.param(
        {"hitl_disabled": True},
        {"hitl_disabled": False, "interrupt_overrides": {"delete_db": True}},
        False,
        "agent.hitl_disabled",
        id="agent-silent-app-explicitly-on",
    ),
    pytest.param(
        {"hitl_disabled": True},
        {"interrupt_overrides": {"delete_db": {"allowed_decisions": ["approve"]}}},
        False,
        "agent.hitl_disabled",
        id="agent-silent-app-override-mapping",
    ),
    # 都不静默 → 走完整 per-tool 合并
    pytest.param(None, None, True, "tool", id="neither-silent-tool-layer"),
    pytest.param(
        {"interrupt_on": {"delete_db": False}}, {}, False, "agent", id="neither-silent-agent-turns-off"
    ),
    pytest.param(
        {"interrupt_on": {"delete_db": False}},
        {"interrupt_overrides": {"delete_db": True}},
        True,
        "app",
        id="neither-silent-app-turns-back-on",
    ),
    pytest.param(
        {"hitl_disabled": False, "interrupt_on": {"delete_db": True}},
        {"hitl_disabled": False, "interrupt_overrides": {"delete_db": False}},
        False,
        "app",
        id="neither-silent-app-turns-off",
    ),
]


@pytest.mark.parametrize(("agent", "app", "ask", "layer"), OR_MERGE)
def test_or_merge(agent: dict[str, Any] | None, app: dict[str, Any] | None, ask: bool, layer: str) -> None:
    found = Resolver(rules_with(agent, app)).explain("delete_db", "bot", "tenant")
    assert (found.ask, found.layer) == (ask, layer)
    if not ask:
        assert found.allowed_decisions == ()


def test_or_merge_both_silent_trace_names_both_layers() -> None:
    found = Resolver(rules_with({"hitl_disabled": True}, {"hitl_disabled": True})).explain(
        "delete_db", "bot", "tenant"
    )
    last = found.trace[-1]
    assert last.layer == "agent.hitl_disabled"
    assert "agent and app" in last.said


def test_or_merge_silence_is_per_agent_and_per_app() -> None:
    """A silenced agent or app silences only itself."""
    rules = RuleSet.from_dict(
        {
            **BASE,
            "agents": {"quiet": {"hitl_disabled": True}, "loud": {}},
            "apps": {"quiet-app": {"hitl_disabled": True}, "loud-app": {}},
        }
    )
    check(
        rules,
        [
            Expect("delete_db", "quiet", "loud-app", False, "agent.hitl_disabled"),
            Expect("delete_db", "loud", "quiet-app", False, "app.hitl_disabled"),
            Expect("delete_db", "loud", "loud-app", True, "tool"),
            Expect("delete_db", None, None, True, "tool"),
        ],
    )
