"""`GatedTool`: a call's tool run through signoff's gate, put in the call's place by the hook
(`BeforeToolCallEvent.selected_tool`).

It runs the tool inside `gate.arun`, so at most once per request (signoff's execution record: a
call resumed twice, from the live agent or from a stale copy of its session, gets the stored
result), with the args the person decided, and gives the model what replaced it otherwise (see
`.results`). In waiting mode it also waits there for the decision.
"""

from __future__ import annotations

from typing import Any

from strands.types.events import ToolResultEvent, TypedEvent
from strands.types.tools import AgentTool, ToolGenerator, ToolResult, ToolSpec, ToolUse

from signoff import Gate, Scope, ToolCall

from .results import model_view, text_result


class GatedTool(AgentTool):
    """`tool` for one call, through the gate (see the module). `wait`: wait for the decision
    (until `timeout`); else the call is decided already (the hook paused it until then)."""

    def __init__(
        self,
        tool: AgentTool,
        gate: Gate,
        call: ToolCall,
        scope: Scope,
        *,
        wait: bool,
        timeout: float | None = None,
        resumed: bool = False,
    ) -> None:
        super().__init__()
        self.tool = tool
        self.gate = gate
        self.call = call
        self.scope = scope
        self.wait = wait
        self.timeout = timeout
        self.resumed = resumed

    @property
    def tool_name(self) -> str:
        name: str = self.tool.tool_name
        return name

    @property
    def tool_spec(self) -> ToolSpec:
        return self.tool.tool_spec

    @property
    def tool_type(self) -> str:
        kind: str = self.tool.tool_type
        return kind

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> ToolGenerator:
        async def run_tool(**final: Any) -> ToolResult:
            use: ToolUse = {**tool_use, "input": final}
            return await run_to_result(self.tool, use, invocation_state, kwargs)

        if self.wait:
            reply = await self.gate.arun(
                self.call, run_tool, self.scope, timeout=self.timeout, resumed=self.resumed
            )
        else:
            reply = await self.gate.arun(self.call, run_tool, self.scope, suspend=True, resumed=True)
        yield ToolResultEvent(model_view(reply, tool_use["toolUseId"]))


async def run_to_result(
    tool: AgentTool, tool_use: ToolUse, invocation_state: dict[str, Any], kwargs: dict[str, Any]
) -> ToolResult:
    """Run the tool as Strands' executor does, to its result: its `ToolResultEvent`, or else the
    last raw value it streamed (its intermediate events are not passed on)."""
    last: Any = None
    streamed = False
    async for event in tool.stream(tool_use, invocation_state, **kwargs):
        if isinstance(event, ToolResultEvent):
            found: ToolResult = event.tool_result
            return found
        if not isinstance(event, TypedEvent):  # Strands' own events are not the result
            last = event
            streamed = True
    if not streamed:
        return text_result(
            tool_use["toolUseId"], f"Tool '{tool_use['name']}' did not return a result", error=True
        )
    result: ToolResult = last
    return result
