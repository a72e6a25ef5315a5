"""CrewAI's hook cost against signoff's (bench/adapters.py --only crewai), measured where CrewAI is
installed: the second venv, .venv-compat."""

from __future__ import annotations

import os
import time
from typing import Any

from adapters_common import SEARCH_ARGS, THREAD, Clock, Side, check, sync_ns
from signoff import Gate


def crewai_hooks(gate: Gate, clock: Clock = time.thread_time_ns) -> list[Side]:
    """The hook functions alone (CrewAI's own approval hook, signoff's before-hook) on one
    context; and per call what CrewAI does around a tool's run: a before-hook context and its
    dispatch, then an after-hook context and its dispatch; with no hooks, with CrewAI's own approval hook
    (`@before_tool_call(tools=["send_email"])` asking at the console, as its docs show), and with
    signoff's (its before-hook; its after-hook is registered only while a call is blocked). Hooks
    are process-global: each side registers its own around its rounds. The thread's CPU clock:
    the crew runs hooks in its own thread."""
    os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
    os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
    os.environ.setdefault("OTEL_SDK_DISABLED", "true")
    from crewai.hooks import (
        before_tool_call,
        get_before_tool_call_hooks,
        register_before_tool_call_hook,
        unregister_before_tool_call_hook,
    )
    from crewai.hooks.tool_hooks import (
        ToolCallHookContext,
        run_after_tool_call_hooks,
        run_before_tool_call_hooks,
    )
    from crewai.tools import tool

    from signoff.integrations.crewai import SignoffHooks
    from signoff.integrations.crewai.registry import before_tool_call as signoff_before

    @tool("search")
    def search(query: str) -> str:
        """Search the web."""
        return query

    structured = search.to_structured_tool()

    asked: list[str] = []

    def console_approval(ctx: Any) -> bool | None:
        asked.append(ctx.tool_name)
        return None if ctx.request_human_input(prompt="Send it?").lower() == "approve" else False

    registered = get_before_tool_call_hooks()
    before_tool_call(tools=["send_email"])(console_approval)  # registers a filtering wrapper
    [own_hook] = [hook for hook in get_before_tool_call_hooks() if hook not in registered]
    unregister_before_tool_call_hook(own_hook)  # registered per side, below

    def one_call() -> None:
        args = dict(SEARCH_ARGS)
        before = ToolCallHookContext(tool_name="search", tool_input=args, tool=structured)
        if run_before_tool_call_hooks(before):
            raise RuntimeError("benchmark setup is wrong: search was blocked")
        after = ToolCallHookContext(
            tool_name="search", tool_input=args, tool=structured, tool_result="r", raw_tool_result="r"
        )
        run_after_tool_call_hooks(after)

    def bare(n: int) -> float:
        return sync_ns(one_call, n, clock)

    def own(n: int) -> float:
        register_before_tool_call_hook(own_hook)
        try:
            return sync_ns(one_call, n, clock)
        finally:
            unregister_before_tool_call_hook(own_hook)
            check(not asked, "CrewAI's own hook asks nobody about search")

    ours = SignoffHooks(gate, thread_id=THREAD)

    def signoff_side(n: int) -> float:
        with ours:
            return sync_ns(one_call, n, clock)

    context = ToolCallHookContext(tool_name="search", tool_input=dict(SEARCH_ARGS), tool=structured)

    def own_alone(n: int) -> float:
        return sync_ns(lambda: own_hook(context), n, clock)

    def signoff_alone(n: int) -> float:
        with ours:
            return sync_ns(lambda: signoff_before(context), n, clock)

    with ours:
        check(signoff_before(context) is None, "signoff's hook lets search through")
    return [
        Side("no hooks (CrewAI's dispatch)", bare),
        Side("CrewAI's own approval hook, dispatched", own),
        Side("SignoffHooks, dispatched", signoff_side),
        Side("CrewAI's own approval hook (the function)", own_alone),
        Side("signoff's before-hook (the function)", signoff_alone),
    ]
