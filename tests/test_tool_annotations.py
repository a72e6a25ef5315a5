"""A tool's annotations in the rules: `tool_annotations` in `when` (CEL and callables), a
service's `approval_mode: unless_read_only`, `signoff explain --annotations`, and the same
answers when a server evaluates the rules (the annotations travel with the request)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from signoff import ConfigError, Gate, Pending, RuleSet, Scope, Store, ToolCall
from signoff.cli import app
from signoff.client import Client
from signoff.rules import Resolver, ToolEntry
from signoff.rules.callables import WhenInput

from .live import LiveServer

READ_ONLY = {"readOnlyHint": True}
DESTRUCTIVE = {"readOnlyHint": False, "destructiveHint": True}
RULES = """
services:
  files:
    approval_mode: unless_read_only
    tools: [read_secret]
  shell:
    when: tool_annotations.destructiveHint
"""


def resolver(text: str = RULES) -> Resolver:
    return Resolver(RuleSet.from_yaml(text))


def test_unless_read_only_asks_unless_the_tool_is_marked_read_only() -> None:
    rules = resolver()
    assert not rules.explain("files.read", annotations=READ_ONLY).ask
    assert rules.explain("files.write", annotations=DESTRUCTIVE).ask
    assert rules.explain("files.new_tool").ask  # says nothing of itself: asks
    assert rules.explain("files.read", annotations={"readOnlyHint": "yes"}).ask  # only `true` counts
    # a listed tool asks even when it says it is read-only (annotations are the tool's own claim)
    assert rules.explain("files.read_secret", annotations=READ_ONLY).ask
    said = [step.said for step in rules.explain("files.read", annotations=READ_ONLY).trace]
    assert any("readOnlyHint=true" in text for text in said)


def test_a_later_layer_still_wins_over_unless_read_only() -> None:
    rules = resolver(RULES + "agents:\n  bot:\n    interrupt_on: {files.read: true}\n")
    assert rules.explain("files.read", "bot", annotations=READ_ONLY).ask
    assert not rules.explain("files.read", "other", annotations=READ_ONLY).ask


def test_when_sees_tool_annotations() -> None:
    rules = resolver()
    assert rules.explain("shell.rm", annotations=DESTRUCTIVE).ask
    assert not rules.explain("shell.ls", annotations={"destructiveHint": False}).ask
    unknown = rules.explain("shell.ls")  # no annotations: the condition cannot say, so it asks
    assert unknown.ask and "could not evaluate" in unknown.trace[-1].said


def test_a_callable_when_gets_the_annotations_too() -> None:
    seen: list[WhenInput] = []

    def destructive(call: WhenInput) -> bool:
        seen.append(call)
        return bool(call.tool_annotations.get("destructiveHint"))

    rules = Resolver(RuleSet(tools={"rm": ToolEntry(requires_approval=True, when=destructive)}))
    assert rules.explain("rm", annotations=DESTRUCTIVE).ask
    assert not rules.explain("rm", annotations=READ_ONLY).ask
    assert seen[0].tool_annotations == DESTRUCTIVE


def test_a_bad_approval_mode_is_refused_with_the_choices() -> None:
    with pytest.raises(ConfigError, match="unless_read_only"):
        RuleSet.from_yaml("services:\n  files: {approval_mode: unless_readonly}\n")


def test_explain_on_the_command_line(tmp_path: Any) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(RULES, encoding="utf-8")
    runner = CliRunner()
    base = ["--db", str(tmp_path / "x.db"), "explain", "files.read", "--config", str(rules)]
    marked = runner.invoke(app, [*base, "--json", "--annotations", '{"readOnlyHint": true}'])
    assert marked.exit_code == 0, marked.output
    shown = json.loads(marked.output)
    assert shown["ask"] is False and shown["layer"] == "service"
    assert "marked read-only" in shown["trace"][-1]["said"]
    unmarked = json.loads(runner.invoke(app, [*base, "--json"]).output)
    assert unmarked["ask"] is True
    assert "unless the tool is marked read-only" in unmarked["trace"][1]["said"]
    bad = runner.invoke(app, [*base, "--annotations", "[1]"])
    assert bad.exit_code == 2


def test_the_gate_passes_a_calls_annotations_to_the_rules(sqlite_store: Store) -> None:
    gate = Gate(sqlite_store, rules=RuleSet.from_yaml(RULES))
    scope = Scope(thread_id="t")
    read = gate.submit(ToolCall(name="files.read", id="1", annotations=READ_ONLY), scope)
    assert not isinstance(read, Pending) and read.status == "not_required"
    write = gate.submit(ToolCall(name="files.write", id="2", annotations=DESTRUCTIVE), scope)
    assert isinstance(write, Pending)


def test_a_server_evaluates_the_annotations_it_is_sent(sqlite_store: Store) -> None:
    """A gate that asks through a server sends the call's annotations; the server's rules (here
    naming the approvers only when the tool is destructive) see them as the gate did."""
    sqlite_store.replace_rules(
        RuleSet.from_yaml(
            "services:\n  files: {approval_mode: unless_read_only}\n"
            "tools:\n  files.wipe: {requires_approval: true, approvers: [alice],"
            " when: tool_annotations.destructiveHint}\n"
        ),
        actor="test",
    )
    with LiveServer(sqlite_store) as server, Client(server.url, server.user("bot", "agent")) as agent:
        gate = Gate(agent)
        scope = Scope(thread_id="remote")
        wipe = gate.submit(ToolCall(name="files.wipe", id="w", annotations=DESTRUCTIVE), scope)
        assert isinstance(wipe, Pending) and wipe.request.rule.approvers == ("alice",)
        read = gate.submit(ToolCall(name="files.read", id="r", annotations=READ_ONLY), scope)
        assert not isinstance(read, Pending)
        with server.client(server.user("bot2", "agent")) as http:
            body = {"thread_id": "t", "tool_call_id": "c", "tool": "files.write", "args": {}}
            refused = [
                http.post("/v1/requests", json={**body, "tool_annotations": bad})
                for bad in ([1], {"readOnlyHint": {"nested": 1}}, {f"k{n}": True for n in range(40)})
            ]
            assert [answer.status_code for answer in refused] == [422, 422, 422]
            accepted = http.post("/v1/requests", json={**body, "tool_annotations": READ_ONLY})
            assert accepted.status_code == 201, accepted.text
