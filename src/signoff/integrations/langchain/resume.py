"""Wait for a paused run's requests to be decided, then resume the graph.

    result = resume_when_decided(agent, config, middleware)   # blocks until decided or expired

Any process can do this: the requests are found in signoff by the interrupt's payload, and the
graph's state in its checkpointer. A request that reaches its deadline resumes the run with the
rule's `on_expire` outcome. A waiting run (`wait=True`) whose process died has no interrupt: it is
continued the same way, and waits in the tools node for what is still undecided.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

from signoff import ToolCall

from .middleware import SignoffMiddleware


def pending_calls(interrupts: Any) -> Iterator[ToolCall]:
    """The calls named by SignoffMiddleware's interrupts (others' interrupts are skipped)."""
    for item in interrupts or ():
        value = getattr(item, "value", None)
        section = value.get("signoff") if isinstance(value, dict) else None
        for entry in (section or {}).get("requests", ()):
            yield ToolCall(name=entry["name"], args=dict(entry["args"]), id=entry["tool_call_id"])


def resume_when_decided(
    agent: Any,
    config: RunnableConfig,
    middleware: SignoffMiddleware,
    *,
    timeout: float | None = None,
    version: str = "v2",
) -> Any:
    """Block until every call the run waits for is decided (or expired), then resume it and
    return what `agent.invoke` returns. `timeout` raises `ReviewTimeout` (nothing is lost)."""
    scope = middleware.scope_fields.scope(config)
    interrupts = agent.get_state(config).interrupts
    for call in pending_calls(interrupts):
        middleware.gate.review(call, scope, timeout=timeout, resumed=True)
    return agent.invoke(resume_command(interrupts), config, version=version)


async def aresume_when_decided(
    agent: Any,
    config: RunnableConfig,
    middleware: SignoffMiddleware,
    *,
    timeout: float | None = None,
    version: str = "v2",
) -> Any:
    """`resume_when_decided` for `ainvoke`: waiting holds no thread."""
    scope = middleware.scope_fields.scope(config)
    snapshot = await agent.aget_state(config)
    for call in pending_calls(snapshot.interrupts):
        await middleware.gate.areview(call, scope, timeout=timeout, resumed=True)
    return await agent.ainvoke(resume_command(snapshot.interrupts), config, version=version)


def resume_command(interrupts: Any) -> Command[Any]:
    """`Command(resume=True)`; with several interrupts pending (one per call, in per-call mode),
    LangGraph needs each named: `True` for every interrupt id."""
    ids = [item.id for item in interrupts or () if getattr(item, "id", None)]
    return Command(resume=dict.fromkeys(ids, True) if len(ids) > 1 else True)
