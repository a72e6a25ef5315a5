"""The Claude Agent SDK's fast path: a call that needs no approval, through the SDK's own control
handler (`Query._handle_control_request`, what runs per request the CLI sends), with the SDK's own
permission prompt and hook and with signoff's.

    .venv/bin/python bench/adapters_claude.py [--quick]

- `can_use_tool`: a callback that allows every call (the SDK's own prompt, as a user writes it)
  against `SignoffPermissions.can_use_tool`;
- PreToolUse: a hook with no opinion (`{}`) against `SignoffPermissions.pre_tool_use`.
Both run in turns in one loop on the thread's CPU clock (`time.thread_time_ns`: the machine is
shared), medians over the rounds and their ratio (target ≤ 1: signoff no slower). Writes
bench/results/adapters-claude.json. `bench/adapters.py` measures the same sides (wall clock).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from adapters_common import (
    FULL,
    QUICK,
    RULES,
    SEARCH_ARGS,
    THREAD,
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

RESULTS_PATH = Path(__file__).resolve().parent / "results" / "adapters-claude.json"
SECTION = "Claude Agent SDK hook, no approval"


def claude_agent_sdk_hooks(
    gate: Gate, loop: asyncio.AbstractEventLoop, clock: Clock = time.perf_counter_ns
) -> list[Side]:
    """[own can_use_tool, signoff's, own PreToolUse hook, signoff's]: each one control request
    through the SDK's handler, its answer written to a transport that keeps the last one."""
    from claude_agent_sdk import PermissionResultAllow
    from claude_agent_sdk._internal.query import Query
    from claude_agent_sdk._internal.transport import Transport

    from signoff.integrations.claude_agent_sdk import SignoffPermissions

    class LastWrite(Transport):
        last = ""

        async def connect(self) -> None:
            return None

        async def write(self, data: str) -> None:
            self.last = data

        async def read_messages(self) -> AsyncIterator[dict[str, Any]]:
            return
            yield {}

        async def close(self) -> None:
            return None

        def is_ready(self) -> bool:
            return True

        async def end_input(self) -> None:
            return None

    async def allow_all(name: str, given: dict[str, Any], context: Any) -> PermissionResultAllow:
        return PermissionResultAllow()

    async def no_opinion(given: Any, tool_use_id: str | None, context: Any) -> Any:
        return {}

    permissions = SignoffPermissions(gate, thread_id=THREAD)
    hook_input = {
        "session_id": THREAD,
        "transcript_path": "",
        "cwd": "/",
        "hook_event_name": "PreToolUse",
        "tool_name": "search",
        "tool_input": SEARCH_ARGS,
        "tool_use_id": "toolu_1",
    }
    asked = {"subtype": "can_use_tool", "tool_name": "search", "input": SEARCH_ARGS, "tool_use_id": "toolu_1"}
    hooked = {"subtype": "hook_callback", "callback_id": "hook_0", "input": hook_input}
    hooked["tool_use_id"] = "toolu_1"

    def through(
        can_use_tool: Callable[..., Awaitable[Any]] | None,
        hook: Callable[..., Awaitable[Any]] | None,
    ) -> tuple[AsyncHook, LastWrite]:
        transport = LastWrite()
        query = Query(transport, is_streaming_mode=True, can_use_tool=can_use_tool)
        request: dict[str, Any] = {"type": "control_request", "request_id": "cli-1", "request": asked}
        if hook is not None:
            query.hook_callbacks["hook_0"] = hook  # what `initialize` registers
            request = {**request, "request": hooked}

        def call() -> Awaitable[None]:
            return query._handle_control_request(request)  # type: ignore[arg-type]

        return call, transport

    sides = [
        ("the SDK, an allow-all can_use_tool", allow_all, None),
        ("the SDK, SignoffPermissions.can_use_tool", permissions.can_use_tool, None),
        ("the SDK, a PreToolUse hook with no opinion", None, no_opinion),
        ("the SDK, SignoffPermissions.pre_tool_use", None, permissions.pre_tool_use),
    ]
    built = []
    for label, can_use_tool, hook in sides:
        call, transport = through(can_use_tool, hook)
        loop.run_until_complete(call())
        answer = json.loads(transport.last)["response"]
        check(answer["subtype"] == "success", f"{label} answers")
        expected = {} if hook is not None else {"behavior": "allow", "updatedInput": SEARCH_ARGS}
        check(answer["response"] == expected, f"{label} lets search through")
        built.append(Side(label, lambda n, call=call: async_ns(call, n, loop, clock)))
    return built


def measure_claude_hooks(report: Report, gate: Gate, sizes: Any, clock: Clock = time.perf_counter_ns) -> None:
    progress("hooks: Claude Agent SDK")
    loop = asyncio.new_event_loop()
    try:
        sides = claude_agent_sdk_hooks(gate, loop, clock)
        runs = interleaved(sides, sizes)
    finally:
        loop.close()
    labels = [side.label for side in sides]
    report_pair(report, "claude_agent_sdk_can_use_tool", SECTION, runs, labels[0], [labels[1]])
    report_pair(report, "claude_agent_sdk_pre_tool_use", SECTION, runs, labels[2], [labels[3]])


def main() -> int:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--quick", action="store_true", help="fewer iterations: a smoke check")
    parser.add_argument("--output", type=Path, default=RESULTS_PATH)
    args = parser.parse_args()
    sizes = QUICK if args.quick else FULL
    report = Report()
    with tempfile.TemporaryDirectory(prefix="signoff-bench-claude-") as workdir:
        store = SQLiteStore(Path(workdir) / "adapters.db")
        try:
            store.replace_rules(RuleSet.from_dict(RULES), actor="bench", channel="bench")
            measure_claude_hooks(report, Gate(store), sizes, time.thread_time_ns)
        finally:
            store.close()
    report.notes.append("CPU time of the measuring thread (time.thread_time_ns), per call")
    print_report(report, "Claude Agent SDK fast path")
    write_results(report, machine_info(None), args.quick, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
