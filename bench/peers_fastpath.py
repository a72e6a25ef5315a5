"""Fast path against the peers: a call that needs no approval, through signoff (`@guard`,
`gate.review`, each adapter) and through LangChain's `HumanInTheLoopMiddleware` hook and
Haystack's `ConfirmationHook` with a never-ask policy. Timed on the thread's CPU clock
(`time.thread_time_ns`): on a shared machine the wall clock of one round differs 2-7x from the
next, the CPU time a call costs does not. All contenders run in turns (A B C, C B A, ...), and each
ratio is taken round by round (the two sides of one round ran back to back)."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from adapters_common import RULES, SEARCH_ARGS, THREAD, Side, check, interleaved, sync_ns
from adapters_common import Sizes as AdapterSizes
from adapters_hooks import haystack_hooks, langchain_hooks, openai_agents_hooks, pydantic_ai_hooks
from metrics import Target
from output import progress
from peers_common import Row, Section, Sizes, Spread, ratio
from signoff import Gate, RuleSet, Scope, ToolCall
from signoff.store import SQLiteStore

CLOCK = time.thread_time_ns
LANGCHAIN = "LangChain HumanInTheLoopMiddleware.after_model"
HAYSTACK = "Haystack ConfirmationHook.run (NeverAskPolicy)"
HAYSTACK_SIGNOFF_HOOK = "Haystack SignoffConfirmationHook.run"
TARGETS = {LANGCHAIN: Target(">=", 1.0), HAYSTACK: Target(">=", 10.0)}
"""The peer's CPU time per call over signoff's: signoff at least this many times faster."""
ADAPTER_SIDES = {
    "after_model: SignoffMiddleware": "LangChain SignoffMiddleware.after_model",
    "wrap_tool_call: SignoffMiddleware": "LangChain SignoffMiddleware.wrap_tool_call",
    "SignoffConfirmationStrategy.run": "Haystack SignoffConfirmationStrategy.run",
    "signoff_approval(...).call_tool": "Pydantic AI signoff_approval(...).call_tool",
    "signoff needs_approval (in SignoffApproval.run)": "OpenAI Agents signoff needs_approval",
}
PEER_SIDES = {
    "after_model: HumanInTheLoopMiddleware": LANGCHAIN,
    "BlockingConfirmationStrategy(NeverAskPolicy).run": (
        "Haystack BlockingConfirmationStrategy(NeverAskPolicy).run"
    ),
    "needs_approval=False": "OpenAI Agents needs_approval=False (the SDK's own check)",
}
"""The frameworks' own paths beside signoff's adapters: no target, they say what the framework costs."""


def search(query: str) -> str:
    """A tool that needs no approval."""
    return query


def gate_sides(gate: Gate) -> list[Side]:
    """`@guard` (inside its scope, as an agent calls it) and `gate.review`."""
    guarded = gate.guard(search, requires_approval=False)
    call = ToolCall(name="search", args=SEARCH_ARGS, id="peers-1")
    scope = Scope(thread_id=THREAD, agent="bench-agent")
    check(gate.review(call, scope).execute, "review lets search through")

    def guard_ns(calls: int) -> float:
        with gate.scope(thread_id=THREAD, agent="bench-agent"):
            return sync_ns(lambda: guarded("weather in Paris"), calls, CLOCK)

    with gate.scope(thread_id=THREAD, agent="bench-agent"):
        check(guarded("probe").executed, "the guarded search runs without asking")
    return [
        Side("signoff @guard", guard_ns),
        Side("signoff gate.review", lambda n: sync_ns(lambda: gate.review(call, scope), n, CLOCK)),
    ]


def haystack_hook_sides(gate: Gate) -> list[Side]:
    """Haystack's own `ConfirmationHook` at the Agent's `before_tool` point, and signoff's (Haystack's
    hook with signoff's strategy): one pending call that needs no approval."""
    from haystack.components.agents.state.state import State
    from haystack.dataclasses import ChatMessage
    from haystack.dataclasses import ToolCall as HaystackToolCall
    from haystack.hooks.human_in_the_loop import (
        BlockingConfirmationStrategy,
        ConfirmationHook,
        NeverAskPolicy,
        SimpleConsoleUI,
    )
    from haystack.tools.tool import Tool

    from signoff.integrations.haystack import SignoffConfirmationHook, SignoffConfirmationStrategy

    tool = Tool(
        name="search",
        description="Search the web.",
        parameters={"type": "object", "properties": {"query": {"type": "string"}}},
        function=search,
    )
    asked = ChatMessage.from_assistant(
        tool_calls=[HaystackToolCall(tool_name="search", arguments=dict(SEARCH_ARGS), id="hs-1")]
    )
    history = [ChatMessage.from_user("weather?"), asked]
    stock = ConfirmationHook(
        confirmation_strategies={
            "*": BlockingConfirmationStrategy(
                confirmation_policy=NeverAskPolicy(), confirmation_ui=SimpleConsoleUI()
            )
        }
    )
    ours = SignoffConfirmationHook({"*": SignoffConfirmationStrategy(gate)})

    def side(label: str, hook: ConfirmationHook) -> Side:
        state = State(
            schema={},
            data={
                "messages": list(history),
                "tools": [tool],
                "hook_context": {"signoff": {"thread_id": THREAD}},
            },
        )

        def run() -> None:
            state.data["messages"] = list(history)
            hook.run(state)

        run()
        after = state.data["messages"][-1]
        check(after.tool_calls and after.tool_calls[0].tool_name == "search", f"{label} lets search through")
        return Side(label, lambda n: sync_ns(run, n, CLOCK))

    return [side(HAYSTACK, stock), side(HAYSTACK_SIGNOFF_HOOK, ours)]


def all_sides(
    gate: Gate, loop: asyncio.AbstractEventLoop
) -> tuple[list[Side], list[str], Callable[[], None]]:
    """Every contender, relabelled; the labels of signoff's; what unbinds LangChain's runnable config
    (its hooks read the config of the graph they run in, bound until then)."""
    langchain, restore = langchain_hooks(gate, CLOCK)
    found = {side.label: side for side in langchain}
    found.update({side.label: side for side in haystack_hooks(gate, CLOCK)})
    found.update({side.label: side for side in pydantic_ai_hooks(gate, loop, CLOCK)})
    found.update({side.label: side for side in openai_agents_hooks(gate, loop, CLOCK)})
    ours = gate_sides(gate)
    ours += [Side(label, found[name].measure) for name, label in ADAPTER_SIDES.items()]
    stock_hook, signoff_hook = haystack_hook_sides(gate)
    ours.append(signoff_hook)
    peers = [Side(label, found[name].measure) for name, label in PEER_SIDES.items()]
    peers.append(stock_hook)
    return [*ours, *peers], [side.label for side in ours], restore


def measure_fast_path(workdir: Path, sizes: Sizes) -> Section:
    progress("peers: fast path (CPU clock)")
    section = Section("fastpath", "Fast path: a call that needs no approval (CPU time per call)")
    store = SQLiteStore(workdir / "peers-fast-path.db")
    loop = asyncio.new_event_loop()
    try:
        store.replace_rules(RuleSet.from_dict(RULES), actor="bench", channel="bench")
        gate = Gate(store)
        sides, ours, restore = all_sides(gate, loop)
        try:
            runs = interleaved(
                sides,
                AdapterSizes(
                    calls=sizes.fast_path_calls, rounds=sizes.fast_path_rounds, wakeups=0, wakeup_warmups=0
                ),
            )
        finally:
            restore()
    finally:
        loop.close()
        store.close()
    rows = {
        label: Row(label, "signoff" if label in ours else "peer", "ns", Spread.of(values), rounds=values)
        for label, values in runs.items()
    }
    section.rows = list(rows.values())
    for peer, target in TARGETS.items():
        for label in ours:
            section.ratios.append(ratio(f"{peer} / {label}", rows, peer, label, target))
    for stock, adapter in (
        ("BlockingConfirmationStrategy(NeverAskPolicy).run", "SignoffConfirmationStrategy.run"),
        ("needs_approval=False", "signoff needs_approval (in SignoffApproval.run)"),
    ):
        theirs, ours_label = PEER_SIDES[stock], ADAPTER_SIDES[adapter]
        section.ratios.append(ratio(f"{theirs} / {ours_label}", rows, theirs, ours_label, None))
    fastest = min(statistics.median(runs[label]) for label in ours)
    section.notes.append(
        f"CPU time of the calling thread (time.thread_time_ns), {sizes.fast_path_rounds} rounds of "
        f"{sizes.fast_path_calls} calls per contender, in turns; ratios are the peer's time over signoff's "
        f"per round (higher: signoff faster). Fastest signoff path: {fastest:,.0f} ns per call."
    )
    section.notes.append(
        "signoff's rules are kept in its SQLite store (a fresh file), as in a deployment; the peers run "
        "at their defaults. Haystack's ConfirmationHook rebuilds the chat history for every turn, whatever "
        "its strategies say; signoff's SignoffConfirmationHook is that hook (a subclass) with signoff's "
        "strategy inside, so its ratio to it cannot reach 10x: the strategy rows compare like with like."
    )
    return section
