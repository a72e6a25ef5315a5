"""Fail closed at every entry point (DESIGN §4): a tool the component named as gated never runs
without a decision; one a rule in force turns off runs unasked; two components sharing one gate
with opposite declarations each get the answer of their own declarations.

Each entry point makes one call of `send_email` in a thread of its own, named as gated (or, for
the sibling, not) in the entry point's own way: a component's tool layer, `@guard`,
`interrupt_on`, a Haystack strategies key, a Pydantic AI `requires_approval` tool, an Agents SDK
`needs_approval` tool, Agent Framework's `SignoffApprovals(tools=...)`, Google ADK's
`SignoffPlugin(tools=...)`, Strands' `SignoffHooks(tools=...)`. Waiting modes are driven in a
thread: when the call asks, a person rejects it; either way the tool's ledger says whether it ran.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from signoff import Gate, RuleSet, Scope, ToolCall, ToolEntry
from signoff.decisions import Reject
from signoff.requests import RequestStatus
from signoff.store import SQLiteStore
from tests.integrations.ledger import Ledger

EMAIL = {"to": "alice", "body": "hi"}

Attempt = Callable[[Gate, bool, str, Ledger], Any]
"""Makes one call of send_email through an entry point: (gate, named as gated?, thread, ledger)."""


# -- the entry points ---------------------------------------------------------------------------


def send_email_into(ledger: Ledger) -> Callable[..., str]:
    def send_email(to: str, body: str) -> str:
        ledger.add("send_email", {"to": to, "body": body})
        return f"sent to {to}"

    return send_email


def declared(named: bool) -> dict[str, ToolEntry]:
    return {"send_email": ToolEntry(requires_approval=named)}


def through_review(gate: Gate, named: bool, thread: str, ledger: Ledger) -> Callable[[], Any]:
    component = gate.component(tools=declared(named))

    def attempt() -> None:
        outcome = component.review(ToolCall(name="send_email", args=EMAIL, id="c1"), Scope(thread_id=thread))
        if outcome.execute:
            send_email_into(ledger)(**outcome.final_tool_params)

    return attempt


def through_run(gate: Gate, named: bool, thread: str, ledger: Ledger) -> Callable[[], Any]:
    component = gate.component(tools=declared(named))
    call = ToolCall(name="send_email", args=EMAIL, id="c1")
    return lambda: component.run(call, send_email_into(ledger), Scope(thread_id=thread))


def through_guard(gate: Gate, named: bool, thread: str, ledger: Ledger) -> Callable[[], Any]:
    component = gate.component()
    guarded = component.guard(name="send_email", requires_approval=named)(send_email_into(ledger))

    def attempt() -> None:
        with component.scope(thread_id=thread):
            guarded(**EMAIL)

    return attempt


def through_langchain(*, wait: bool) -> Attempt:
    def build(gate: Gate, named: bool, thread: str, ledger: Ledger) -> Callable[[], Any]:
        from langchain.agents import create_agent
        from langgraph.checkpoint.memory import InMemorySaver

        from signoff.integrations.langchain import SignoffMiddleware
        from tests.integrations.lc_support import calls, make_tools, script

        middleware = SignoffMiddleware(interrupt_on={"send_email": named}, gate=gate, wait=wait)
        model = script(calls(("send_email", EMAIL, "c1")), "done")
        agent = create_agent(
            model, tools=make_tools(ledger), middleware=[middleware], checkpointer=InMemorySaver()
        )
        config: Any = {"configurable": {"thread_id": thread}}
        return lambda: agent.invoke({"messages": [{"role": "user", "content": "go"}]}, config, version="v2")

    return build


def through_haystack(*, hook: str) -> Attempt:
    def build(gate: Gate, named: bool, thread: str, ledger: Ledger) -> Callable[[], Any]:
        from haystack.components.agents import Agent
        from haystack.dataclasses import ChatMessage
        from haystack.hooks.human_in_the_loop import ConfirmationHook

        from signoff.integrations.haystack import (
            SignoffConfirmationHook,
            SignoffConfirmationStrategy,
            SignoffPauseHook,
        )
        from tests.integrations.hs_support import Script, calls, make_tools

        strategies: dict[Any, Any] = {("send_email" if named else "*"): SignoffConfirmationStrategy(gate)}
        hooks = {
            "stock": lambda: ConfirmationHook(confirmation_strategies=strategies),
            "signoff": lambda: SignoffConfirmationHook(strategies),
            "pause": lambda: SignoffPauseHook(strategies),
        }
        agent = Agent(
            chat_generator=Script(calls(("send_email", EMAIL, "c1")), "done").generator(),
            tools=make_tools(ledger),
            hooks={"before_tool": [hooks[hook]()]},
        )
        user = [ChatMessage.from_user("mail alice")]
        return lambda: agent.run(user, hook_context={"signoff": {"thread_id": thread}})

    return build


def through_pydantic_ai(*, wait: bool) -> Attempt:
    def build(gate: Gate, named: bool, thread: str, ledger: Ledger) -> Callable[[], Any]:
        from pydantic_ai import Agent, Tool
        from pydantic_ai.tools import DeferredToolRequests
        from pydantic_ai.toolsets import FunctionToolset

        from signoff.integrations.pydantic_ai import SignoffApprovals
        from tests.integrations.pai_support import Script

        tools = FunctionToolset([Tool(send_email_into(ledger), name="send_email", requires_approval=named)])
        script = Script([[("send_email", EMAIL, "c1")], "done"])
        agent = Agent(
            script.model,
            toolsets=[tools],
            capabilities=[SignoffApprovals(gate, wait=wait)],
            output_type=[str, DeferredToolRequests],
        )
        return lambda: asyncio.run(agent.run("mail alice", conversation_id=thread))

    return build


def through_openai_agents(*, wait: bool) -> Attempt:
    def build(gate: Gate, named: bool, thread: str, ledger: Ledger) -> Callable[[], Any]:
        from agents import function_tool
        from agents.testing import ScriptedModel, assistant_message, function_call

        from signoff.integrations.openai_agents import SignoffApproval
        from tests.integrations.oa_support import USER, agent

        approval = SignoffApproval(gate)
        send_email = function_tool(send_email_into(ledger), name_override="send_email", needs_approval=named)
        tools = approval.gate_tools([send_email])
        model = ScriptedModel(
            [[function_call("send_email", EMAIL, call_id="c1")], [assistant_message("done")]]
        )
        return lambda: asyncio.run(approval.run(agent(model, tools), USER, thread_id=thread, wait=wait))

    return build


def through_agent_framework(*, wait: bool) -> Attempt:
    def build(gate: Gate, named: bool, thread: str, ledger: Ledger) -> Callable[[], Any]:
        from agent_framework import tool

        from signoff.integrations.agent_framework import SignoffApprovals
        from tests.integrations.af_support import OneCall, make_agent

        approvals = SignoffApprovals(gate, tools=declared(named), thread_id=thread, wait=wait)
        send_email = tool(send_email_into(ledger), name="send_email", description="Send an email.")
        agent = make_agent(OneCall("send_email", EMAIL, "c1"), [send_email], approvals.middleware)
        return lambda: asyncio.run(agent.run("mail alice", session=agent.create_session()))

    return build


def through_google_adk(*, wait: bool) -> Attempt:
    def build(gate: Gate, named: bool, thread: str, ledger: Ledger) -> Callable[[], Any]:
        from google.adk.sessions import InMemorySessionService
        from google.adk.tools.function_tool import FunctionTool

        from signoff.integrations.google_adk import SignoffPlugin
        from tests.integrations.adk_support import OneCall, make_runner, run_once

        plugin = SignoffPlugin(gate, tools=declared(named), thread_id=thread, wait=wait)
        send_email = FunctionTool(send_email_into(ledger))
        model = OneCall(name="send_email", args=EMAIL, call_id="c1")
        runner = make_runner(model, [send_email], InMemorySessionService(), [plugin])
        return lambda: run_once(runner, "mail alice")

    return build


def through_strands(*, wait: bool) -> Attempt:
    def build(gate: Gate, named: bool, thread: str, ledger: Ledger) -> Callable[[], Any]:
        from strands import tool

        from signoff.integrations.strands import SignoffHooks
        from tests.integrations.compat.strands_support import OneCall, make_agent

        hooks = SignoffHooks(gate, tools=declared(named), thread_id=thread, wait=wait)
        send_email = tool(send_email_into(ledger), name="send_email", description="Send an email.")
        agent = make_agent(OneCall("send_email", EMAIL, "c1"), [send_email], [hooks])
        return lambda: agent("mail alice")

    return build


ENTRY_POINTS: dict[str, Attempt] = {
    "gate.review": through_review,
    "gate.run": through_run,
    "guard": through_guard,
    "langchain-durable": through_langchain(wait=False),
    "langchain-waiting": through_langchain(wait=True),
    "haystack-stock-hook": through_haystack(hook="stock"),
    "haystack-signoff-hook": through_haystack(hook="signoff"),
    "haystack-pause": through_haystack(hook="pause"),
    "pydantic-ai-durable": through_pydantic_ai(wait=False),
    "pydantic-ai-waiting": through_pydantic_ai(wait=True),
    "openai-agents-durable": through_openai_agents(wait=False),
    "openai-agents-waiting": through_openai_agents(wait=True),
    "agent-framework-durable": through_agent_framework(wait=False),
    "agent-framework-waiting": through_agent_framework(wait=True),
    "google-adk-durable": through_google_adk(wait=False),
    "google-adk-waiting": through_google_adk(wait=True),
    # strands-agents conflicts with the [mcp] extra: these run in the second venv
    # (tests/integrations/compat/test_strands_fail_closed.py), and skip here
    "strands-durable": through_strands(wait=False),
    "strands-waiting": through_strands(wait=True),
}
FRAMEWORKS = {
    "langchain": "langchain",
    "haystack": "haystack",
    "pydantic-ai": "pydantic_ai",
    "openai": "agents",
    "agent-framework": "agent_framework",
    "google-adk": "google.adk",
    "strands": "strands",
}


# -- driving one attempt ------------------------------------------------------------------------


@dataclass(frozen=True)
class Seen:
    asked: bool
    ran: bool


def drive(attempt: Callable[[], Any], store: SQLiteStore, thread: str, ledger: Ledger) -> Seen:
    """Run the attempt in a thread; when it asks, a person rejects the call. Whether it asked (a
    request exists for the thread) and whether the tool ran."""
    failure: list[BaseException] = []

    def run() -> None:
        try:
            attempt()
        except BaseException as exc:  # reported below, with the test's own traceback
            failure.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    give_up = time.monotonic() + 60
    while worker.is_alive() and time.monotonic() < give_up:
        for request in store.list_requests(thread_id=thread, status=RequestStatus.PENDING):
            store.decide(request.id, Reject(message="no"), actor="alice")
        worker.join(0.02)
    assert not worker.is_alive(), "the attempt neither finished nor asked within a minute"
    if failure:
        raise failure[0]
    return Seen(asked=bool(store.list_requests(thread_id=thread)), ran=bool(ledger.runs("send_email")))


ASKS = Seen(asked=True, ran=False)
RUNS = Seen(asked=False, ran=True)


@pytest.fixture(params=list(ENTRY_POINTS))
def entry(request: pytest.FixtureRequest) -> tuple[str, Attempt]:
    name: str = request.param
    for prefix, module in FRAMEWORKS.items():
        if name.startswith(prefix):
            pytest.importorskip(module)
    return name, ENTRY_POINTS[name]


def attempt_once(
    store: SQLiteStore, tmp_path: Path, entry: tuple[str, Attempt], gate: Gate, named: bool, tag: str
) -> tuple[Callable[[], Seen], Ledger]:
    """Build the entry point's component on `gate` now; the returned call drives it."""
    name, build = entry
    thread = f"{name}-{tag}"
    ledger = Ledger(tmp_path / f"{tag}.jsonl")
    attempt = build(gate, named, thread, ledger)
    return (lambda: drive(attempt, store, thread, ledger)), ledger


# -- the matrix ---------------------------------------------------------------------------------


def test_no_rules_at_all(entry: tuple[str, Attempt], sqlite_store: SQLiteStore, tmp_path: Path) -> None:
    gate = Gate(sqlite_store)
    named, _ = attempt_once(sqlite_store, tmp_path, entry, gate, True, "named")
    unnamed, _ = attempt_once(sqlite_store, tmp_path, entry, gate, False, "unnamed")
    assert named() == ASKS
    assert unnamed() == RUNS


def test_rules_that_cover_the_tool(
    entry: tuple[str, Attempt], sqlite_store: SQLiteStore, tmp_path: Path
) -> None:
    """A rule that sets the tool's card (but not whether it asks) does not switch a named tool
    off; one that says it asks asks for every component."""
    sqlite_store.set_layer("tool", "send_email", {"description": "Mail {to}?"}, actor="ops")
    gate = Gate(sqlite_store, rules_refresh=0)
    named, _ = attempt_once(sqlite_store, tmp_path, entry, gate, True, "named")
    unnamed, _ = attempt_once(sqlite_store, tmp_path, entry, gate, False, "unnamed")
    assert named() == ASKS
    [request] = sqlite_store.list_requests(thread_id=f"{entry[0]}-named")
    assert request.description == "Mail alice?"
    assert unnamed() == RUNS

    sqlite_store.set_layer("tool", "send_email", {"requires_approval": True}, actor="ops")
    gate = Gate(sqlite_store, rules_refresh=0)
    unnamed_now, _ = attempt_once(sqlite_store, tmp_path, entry, gate, False, "unnamed-covered")
    assert unnamed_now() == ASKS


@pytest.mark.parametrize("named_first", [True, False], ids=["named-built-first", "named-built-last"])
def test_two_components_sharing_one_gate_with_opposite_declarations(
    entry: tuple[str, Attempt], sqlite_store: SQLiteStore, tmp_path: Path, named_first: bool
) -> None:
    gate = Gate(sqlite_store)
    order = [True, False] if named_first else [False, True]
    built = {
        named: attempt_once(sqlite_store, tmp_path, entry, gate, named, f"shared-{named}") for named in order
    }
    assert built[True][0]() == ASKS
    assert built[False][0]() == RUNS


def test_a_rule_that_turns_the_tool_off(
    entry: tuple[str, Attempt], sqlite_store: SQLiteStore, tmp_path: Path
) -> None:
    sqlite_store.set_layer("tool", "send_email", {"requires_approval": False}, actor="ops")
    gate = Gate(sqlite_store, rules_refresh=0)
    named, ledger = attempt_once(sqlite_store, tmp_path, entry, gate, True, "off")
    assert named() == RUNS
    assert len(ledger.runs("send_email")) == 1


def test_an_agent_rule_that_turns_the_tool_off_applies_to_its_agent_only(sqlite_store: SQLiteStore) -> None:
    """An agent's `interrupt_on: false` turns a named tool off for that agent; another agent
    (or none) is still asked."""
    rules = RuleSet.from_dict({"agents": {"nightly": {"interrupt_on": {"send_email": False}}}})
    component = Gate(sqlite_store, rules=rules).component(tools=declared(True))
    assert component.explain("send_email", agent="nightly").ask is False
    assert component.explain("send_email", agent="support").ask is True
    assert component.explain("send_email").ask is True


# -- the property: each component's answer is that of its declarations alone -------------------

TOOL_NAMES = ("send_email", "delete_db", "notes.delete", "ls")
DECISION_LISTS = (None, ["reject"], ["edit", "reject"], ["approve", "respond"])


def declaration() -> Any:
    from hypothesis import strategies as st

    def entry(requires: bool, decisions: list[str] | None, description: str | None) -> ToolEntry:
        fields: dict[str, Any] = {"requires_approval": requires}
        if decisions is not None:
            fields["allowed_decisions"] = decisions
        if description is not None:
            fields["description"] = description
        return ToolEntry.model_validate(fields)

    return st.builds(
        entry, st.booleans(), st.sampled_from(DECISION_LISTS), st.sampled_from((None, "declared {to}"))
    )


def rule_layers() -> Any:
    """Rules in force: maybe a tool entry (with or without `requires_approval`), a service, an
    agent's switch, an app's override."""
    from hypothesis import strategies as st

    tool_entry = st.fixed_dictionaries(
        {},
        optional={
            "requires_approval": st.booleans(),
            "allowed_decisions": st.sampled_from([["reject"], ["edit"], ["approve", "edit"]]),
            "description": st.just("stored {to}"),
        },
    )
    return st.fixed_dictionaries(
        {},
        optional={
            "tools": st.dictionaries(st.sampled_from((*TOOL_NAMES, "*", "send_*")), tool_entry, max_size=3),
            "services": st.dictionaries(
                st.just("notes"),
                st.fixed_dictionaries(
                    {"approval_mode": st.sampled_from(["all", "whitelist", "blacklist"])},
                    optional={"tools": st.just(["delete"])},
                ),
                max_size=1,
            ),
            "agents": st.dictionaries(
                st.just("support"),
                st.fixed_dictionaries(
                    {"interrupt_on": st.dictionaries(st.sampled_from(TOOL_NAMES), st.booleans(), max_size=2)}
                ),
                max_size=1,
            ),
        },
    )


def test_each_components_answer_is_that_of_its_declarations_alone(sqlite_store: SQLiteStore) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    components = st.lists(
        st.dictionaries(st.sampled_from(TOOL_NAMES), declaration(), max_size=3), min_size=2, max_size=4
    )

    @settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        layers=rule_layers(),
        declared_by=components,
        gate_own=st.dictionaries(st.sampled_from(TOOL_NAMES), declaration(), max_size=2),
    )
    def check(
        layers: dict[str, Any], declared_by: list[dict[str, ToolEntry]], gate_own: dict[str, ToolEntry]
    ) -> None:
        rules = RuleSet.from_dict(layers)
        shared = Gate(sqlite_store, rules=rules)
        for name, entry in gate_own.items():
            shared.register_tool(name, entry)
        built = [shared.component(tools=tools) for tools in declared_by]
        for tools, component in zip(declared_by, built, strict=True):
            alone = Gate(sqlite_store, rules=rules)
            for name, entry in gate_own.items():  # the gate's own lie beneath every component's
                alone.register_tool(name, entry)
            alone = alone.component(tools=tools)
            for tool in TOOL_NAMES:
                for agent in (None, "support"):
                    mine, theirs = component.explain(tool, agent=agent), alone.explain(tool, agent=agent)
                    assert mine.to_dict() == theirs.to_dict()
                    if tools.get(tool) is not None and tools[tool].requires_approval:
                        # named as gated: only a rule in force that says so turns it off
                        switches = layers.get("agents", {}).get("support", {}).get("interrupt_on", {})
                        agent_says = switches.get(tool) if agent == "support" else None
                        tool_says = layers.get("tools", {}).get(tool, {}).get("requires_approval")
                        turned_off = agent_says is False or (agent_says is None and tool_says is False)
                        assert mine.ask is not turned_off

    check()


# -- AG-UI: a front end that shows what asks, and decides only by a person's answer -------------


@pytest.mark.parametrize("named", [True, False], ids=["named", "turned-off"])
def test_agui_shows_a_named_call_and_only_a_persons_answer_runs_it(
    sqlite_store: SQLiteStore, tmp_path: Path, named: bool
) -> None:
    pytest.importorskip("ag_ui")
    from signoff import Client
    from tests.agui.support import interrupts, run, run_body
    from tests.live import LiveServer

    if not named:
        sqlite_store.set_layer("tool", "send_email", {"requires_approval": False}, actor="ops")
    with LiveServer(sqlite_store) as server:
        alice, bot = server.user("alice"), server.user("bot", "agent")
        ledger = Ledger(tmp_path / "agui.jsonl")
        with Client(server.url, bot) as backend:
            gate = Gate(backend).component(tools=declared(True))
            call = ToolCall(name="send_email", args=EMAIL, id="c1")
            worker = threading.Thread(
                target=lambda: gate.run(call, send_email_into(ledger), Scope(thread_id="agui")), daemon=True
            )
            worker.start()
            if not named:
                worker.join(30)
                assert ledger.runs("send_email") and not interrupts(run(server, alice, run_body()))
                return
            while not sqlite_store.list_requests(thread_id="agui"):
                worker.join(0.02)
            shown = interrupts(run(server, alice, run_body()))  # shown; nothing decided by showing
            assert [item.metadata["signoff"]["tool"] for item in shown] == ["send_email"]
            cancelled = [{"interruptId": shown[0].id, "status": "cancelled"}]
            run(server, alice, run_body(resume=cancelled))  # a cancelled entry decides nothing
            with server.client(bot) as agent:  # an agent never decides, not even its own call
                assert agent.post("/agui", json=run_body(resume=[])).status_code == 403
            [request] = sqlite_store.list_requests(thread_id="agui")
            assert request.status is RequestStatus.PENDING and not ledger.runs("send_email")
            approved = [{"interruptId": shown[0].id, "status": "resolved", "payload": "approved"}]
            run(server, alice, run_body(resume=approved))
            worker.join(30)
            assert len(ledger.runs("send_email")) == 1


# -- the MCP proxy: its service is its declaration ----------------------------------------------

MCP_RULES = {
    "no-rules": None,
    "covering": "services:\n  files: {description: 'Files: {tool_name}'}\n",
    "turned-off": "services:\n  files: {requires_approval: false}\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("rules", list(MCP_RULES))
def test_the_mcp_proxy(tmp_path: Path, transport: str, rules: str) -> None:
    """`delete_file` through `signoff mcp-proxy --name files` (stdio, or streamable HTTP): with
    no rules, or rules that only set the service's card, it waits for a person and the upstream
    does not run it; a rule that turns the service off lets it run at once."""
    pytest.importorskip("mcp")
    import anyio

    from tests.mcp_proxy.harness import RawProxy, Setup, client, listening, text_of

    setup = Setup(tmp_path, rules=None)
    store = SQLiteStore(setup.db)
    try:
        if MCP_RULES[rules] is not None:
            store.replace_rules(RuleSet.from_yaml(MCP_RULES[rules]), actor="test")
        if transport == "stdio":
            proxy = RawProxy(setup, "--max-wait", "0.5")
            try:
                answer = proxy.call("delete_file", {"path": "p"})
            finally:
                proxy.close()
            waited = bool(answer.get("isError")) and "awaits approval" in text_of(answer)
        else:

            async def call() -> bool:
                async with listening(setup, "--max-wait", "0.5") as url, client(url) as mcp:
                    result = await mcp.call_tool("delete_file", {"path": "p"})
                    return bool(result.is_error) and "awaits approval" in str(result.content)

            waited = anyio.run(call)
        asked = [request.tool_name for request in store.list_requests()]
    finally:
        store.close()
    if rules == "turned-off":
        assert (waited, asked, setup.run_count("delete_file")) == (False, [], 1)
    else:
        assert (waited, asked, setup.run_count("delete_file")) == (True, ["files.delete_file"], 0)


# -- the CLI: only a person's decision runs a named call ----------------------------------------


def test_the_cli_decides_a_named_call_only_as_a_person(sqlite_store: SQLiteStore, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from signoff.cli import app

    sqlite_store.add_user("alice", role="member", actor="test")
    sqlite_store.add_user("bot", role="agent", actor="test")
    ledger = Ledger(tmp_path / "cli.jsonl")
    gate = Gate(sqlite_store).component(tools=declared(True))
    call = ToolCall(name="send_email", args=EMAIL, id="c1")
    worker = threading.Thread(
        target=lambda: gate.run(call, send_email_into(ledger), Scope(thread_id="cli")), daemon=True
    )
    worker.start()
    while not sqlite_store.list_requests(thread_id="cli"):
        worker.join(0.02)
    [request] = sqlite_store.list_requests(thread_id="cli")
    runner = CliRunner(env={"COLUMNS": "200", "SIGNOFF_DB": None, "SIGNOFF_URL": None})

    def approve(as_user: str) -> int:
        db = str(sqlite_store.path)
        return runner.invoke(app, ["--db", db, "approve", request.id, "--as", as_user]).exit_code

    assert approve("bot") != 0 and approve("ghost") != 0  # an agent, nobody: refused
    assert sqlite_store.get_request(request.id).status is RequestStatus.PENDING and not ledger.runs()
    assert approve("alice") == 0
    worker.join(30)
    assert len(ledger.runs("send_email")) == 1
