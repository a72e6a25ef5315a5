"""The Strands adapter's hook cost for a call that needs no approval, against Strands' own.

    .venv-compat/bin/python bench/strands_hook.py [--quick]

strands-agents cannot be installed beside signoff's `[mcp]` extra (it pins mcp<2.2), so this runs
in the second venv (`.venv-compat`, the `dev-compat` extra), apart from bench/adapters.py. Writes
bench/results/strands_hook.json.

One ungated call (`search`; the rules, kept in a SQLite store, gate only `send_email`): what
Strands' tool executor does per call, its `BeforeToolCallEvent` callbacks, the selected tool
streamed to its result and the `AfterToolCallEvent` callbacks, for an agent with
- no hooks (the tool alone),
- a pass-through `HookProvider` on `BeforeToolCallEvent`,
- Strands' own approval: the `HumanInTheLoop` intervention with `search` allow-listed,
- signoff's `SignoffHooks`.
The sides run in turns (A B, B A, ...) in one loop, each timed on the thread's CPU clock (the
machine is shared), medians over the rounds; the ratios are signoff's over each of Strands'.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from adapters_common import (
    EMAIL_ARGS,
    FULL,
    QUICK,
    RULES,
    SEARCH_ARGS,
    AsyncHook,
    Clock,
    Side,
    async_ns,
    check,
    interleaved,
    report_pair,
)
from machine import machine_info
from metrics import Report
from output import print_report, progress, write_results
from signoff import Gate, RuleSet
from signoff.store import SQLiteStore

RESULTS_PATH = Path(__file__).resolve().parent / "results" / "strands_hook.json"
SECTION = "Strands hook, no approval"


def strands_hooks(gate: Gate, loop: asyncio.AbstractEventLoop, clock: Clock) -> list[Side]:
    from strands import Agent, tool
    from strands.hooks import AfterToolCallEvent, BeforeToolCallEvent, HookProvider, HookRegistry
    from strands.types.events import ToolResultEvent
    from strands.vended_interventions.hitl import HumanInTheLoop

    from signoff.integrations.strands import SignoffHooks

    @tool
    async def search(query: str) -> str:
        """Search the web.

        Args:
            query: what to look for
        """  # async: a sync tool runs in a thread (asyncio.to_thread), which would dominate
        return query

    class PassThrough(HookProvider):
        def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
            registry.add_callback(BeforeToolCallEvent, self.before)

        def before(self, event: Any) -> None:
            return None

    def agent(**options: Any) -> Any:
        return Agent(tools=[search], callback_handler=None, **options)

    def through(owner: Any) -> AsyncHook:
        # what Strands' tool executor does per call: the before-tool callbacks, the tool, the
        # after-tool callbacks
        async def call() -> Any:
            use: Any = {"toolUseId": "st-1", "name": "search", "input": dict(SEARCH_ARGS)}
            event = BeforeToolCallEvent(agent=owner, selected_tool=search, tool_use=use, invocation_state={})
            event, _ = await owner.hooks.invoke_callbacks_async(event)
            result = None
            async for found in event.selected_tool.stream(event.tool_use, {}):
                if isinstance(found, ToolResultEvent):
                    result = found.tool_result
            after = AfterToolCallEvent(
                agent=owner,
                selected_tool=event.selected_tool,
                tool_use=use,
                invocation_state={},
                result=result,
            )
            await owner.hooks.invoke_callbacks_async(after)
            return result

        return call

    ours = agent(hooks=[SignoffHooks(gate, thread_id="bench-strands")])
    result = loop.run_until_complete(through(ours)())
    check(result["content"] == [{"text": SEARCH_ARGS["query"]}], "search runs through signoff's hooks")
    sides = {
        "no hooks": agent(),
        "pass-through HookProvider": agent(hooks=[PassThrough()]),
        "HumanInTheLoop(allowed_tools=['search'])": agent(
            interventions=[HumanInTheLoop(allowed_tools=["search"])]
        ),
        "SignoffHooks": ours,
    }
    return [Side(label, measured(through(owner), loop, clock)) for label, owner in sides.items()]


def measured(hook: AsyncHook, loop: asyncio.AbstractEventLoop, clock: Clock) -> Any:
    return lambda calls: async_ns(hook, calls, loop, clock)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls and rounds")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    report = Report()
    loop = asyncio.new_event_loop()
    with tempfile.TemporaryDirectory() as workdir:
        store = SQLiteStore(str(Path(workdir) / "signoff.db"))
        gate = Gate(store, rules=RuleSet.model_validate(RULES))
        check(gate.asks_nowhere("search") and not gate.asks_nowhere("send_email"), f"rules {EMAIL_ARGS}")
        try:
            progress("hooks: Strands")
            sides = strands_hooks(gate, loop, time.thread_time_ns)
            runs = interleaved(sides, sizes)
        finally:
            loop.close()
            store.close()
    labels = [side.label for side in sides]
    report_pair(report, "strands_bare", SECTION, runs, labels[0], [labels[3]])
    report_pair(report, "strands_passthrough", SECTION, runs, labels[1], [labels[3]])
    report_pair(report, "strands_own_approval", SECTION, runs, labels[2], [labels[3]])
    print_report(report, "signoff: the Strands hook")
    write_results(report, machine_info(None), args.quick, RESULTS_PATH)
    return 0


if __name__ == "__main__":
    sys.exit(main())
