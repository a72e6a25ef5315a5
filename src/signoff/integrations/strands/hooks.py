"""`SignoffHooks`: signoff's gate in front of every tool call of a Strands agent.

A call nobody is asked about (`Gate.asks_nowhere`, then the rules for the call's agent, app and
args) goes on as without signoff. Otherwise the hook puts a `GatedTool` in the call's place
(`event.selected_tool`), which runs the tool inside `gate.arun`, at most once per request
(signoff's execution record), with the args the person decided:

- waiting mode (`wait=True`): the call awaits the decision (until the rule's deadline, or
  `timeout`), then runs, or gives the model what replaced it (see `.results`);
- durable mode: while undecided, the hook pauses the run with Strands' own interrupt
  (`event.interrupt("signoff", reason={"signoff": {request...}})`): the agent returns with
  `stop_reason == "interrupt"`, its interrupt state saved by its session manager. The run goes on
  when the agent is called with the interrupt responses (`SignoffHooks.resume`), in any process
  that restores the agent from the same session. The decision is read from signoff's store, never
  from the response: a response for a call still undecided pauses it again (`signoff#2`...), and
  one replayed from a stale copy of the session gives the stored result without running the
  tool again.

signoff's refusal (an unattended run's cap, a store that cannot answer, a deadline that fails the
run) stops the run, as an exception out of `agent()`: Strands wraps it in an `EventLoopException`
(its `__cause__`); the tool does not run.

Strands keeps the answered interrupts in the agent's interrupt state only (`agent._interrupt_state`,
which its session managers save): the hook reads it there to know a call it paused.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

from strands import Agent
from strands.hooks import AfterToolCallEvent, BeforeToolCallEvent, HookProvider, HookRegistry

from signoff import Gate, Pending, SignoffError, ToolCall, ToolEntry, ToolFailed

from .._gate import RulesGiven, adapter_gate
from .._rounds import turn_round
from .._scope import ScopeDefaults
from .results import interrupt_name, pause_reason
from .resume import Decided, Resumed, adecided, aresume, decided, resume
from .scope import agent_scope, who
from .tool import GatedTool


class SignoffHooks(HookProvider):
    """signoff's gate for a Strands agent's tool calls (see the module): `Agent(hooks=[hooks])`.

    `gate`: a `signoff.Gate`; without one, `Gate(open_backend(), rules=rules)` (a server when
    `SIGNOFF_URL` is set). `tools`: the tools these agents name as gated or not (`ToolEntry`s: the
    gate's tool layer for these hooks only, `Gate.component`). `agent`, `app`, `requester`,
    `unattended`, `thread_id`: the scope's defaults, overridden per agent by
    `agent.state["signoff"]` (the thread is the agent's session unless one is given). `wait`: wait
    for decisions inside the run (until `timeout`)."""

    def __init__(
        self,
        gate: Gate | None = None,
        *,
        rules: RulesGiven = None,
        tools: Mapping[str, ToolEntry] | None = None,
        wait: bool = False,
        timeout: float | None = None,
        agent: str | None = None,
        app: str | None = None,
        requester: str | None = None,
        unattended: bool = False,
        thread_id: str | None = None,
    ) -> None:
        gate = adapter_gate(gate, rules)
        self.gate = gate.component(tools=tools)
        self.nowhere = self.gate.nowhere
        self.defaults = ScopeDefaults(
            thread_id=thread_id, agent=agent, app=app, requester=requester, unattended=unattended
        )
        self.wait = wait
        self.timeout = timeout
        self._watched: weakref.WeakSet[Agent] = weakref.WeakSet()

    # -- durable resume ----------------------------------------------------------------------

    def decided(self, agent: Agent) -> Decided:
        """The interrupt responses of the agent's paused signoff calls that are decided, and the
        calls still waiting (see `.resume`)."""
        return decided(self.gate, agent, self.defaults)

    async def adecided(self, agent: Agent) -> Decided:
        return await adecided(self.gate, agent, self.defaults)

    def resume(self, agent: Agent, **invoke: Any) -> Resumed:
        """Run the paused agent on (`agent(responses, **invoke)`) once every signoff call it paused
        is decided (the tools run, or the model sees what replaced them); while any is undecided,
        run nothing and say which. LookupError if signoff paused no call of the agent."""
        return resume(self.gate, self.defaults, agent, **invoke)

    async def aresume(self, agent: Agent, **invoke: Any) -> Resumed:
        """`resume` with `await agent.invoke_async(responses, **invoke)`."""
        return await aresume(self.gate, self.defaults, agent, **invoke)

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolCallEvent, self.before_tool)

    def _watch(self, agent: Agent) -> None:
        """Register `after_tool` on the agent once it runs a gated call (not before: a callback
        more on every call would cost the calls nobody is asked about)."""
        if agent not in self._watched:
            agent.hooks.add_callback(AfterToolCallEvent, self.after_tool)
            self._watched.add(agent)

    def after_tool(self, event: AfterToolCallEvent) -> None:
        """signoff's refusal inside a gated call (an unattended run's cap, a store that is down, a
        deadline that fails the run...) stops the run: Strands would make it the tool's error
        result and go on. The tool's own failure stays its result, as without signoff."""
        error = event.exception
        ours = isinstance(event.selected_tool, GatedTool)
        if ours and isinstance(error, SignoffError) and not isinstance(error, ToolFailed):
            raise error

    async def before_tool(self, event: BeforeToolCallEvent) -> None:
        tool_use = event.tool_use
        name = tool_use["name"]
        agent = event.agent
        if self.nowhere[name] and not agent._interrupt_state.activated:
            return  # the fast path: nobody is asked about this call
        tool = event.selected_tool
        if tool is None:
            return  # an unknown tool: Strands gives the model its error, nothing runs
        attempt, resumed = paused_before(event)
        if not resumed and (self.nowhere[name] or not self._asks(agent, name, tool_use["input"])):
            return
        call_id = tool_use["toolUseId"]
        if not call_id:
            raise ValueError(
                f"the call of {name!r} has no toolUseId, so signoff cannot find its request again"
            )
        call = ToolCall(
            name=name,
            args=dict(tool_use["input"]),
            id=call_id,
            description=tool.tool_spec.get("description"),
            schema=tool.tool_spec.get("inputSchema", {}).get("json"),
            round=round_of(agent, call_id),
        )
        scope = agent_scope(agent, self.defaults)
        self._watch(agent)
        if not self.wait:
            found = await self.gate.asubmit(call, scope, resumed=resumed)
            if isinstance(found, Pending):
                event.interrupt(interrupt_name(attempt), reason=pause_reason(found, tool_use))
        event.selected_tool = GatedTool(
            tool, self.gate, call, scope, wait=self.wait, timeout=self.timeout, resumed=resumed
        )

    def _asks(self, agent: Agent, name: str, args: Any) -> bool:
        agent_name, app, requester = who(agent, self.defaults)
        if not self.gate.may_ask(name, agent_name, app):
            return False
        explained = self.gate.explain(name, agent=agent_name, app=app, args=dict(args), requester=requester)
        return explained.ask


def paused_before(event: BeforeToolCallEvent) -> tuple[int, bool]:
    """(the attempt of the interrupt to raise if the call pauses now: the first not answered,
    whether signoff paused the call before and the agent was resumed with a response to it)."""
    interrupts = event.agent._interrupt_state.interrupts
    attempt = 1
    while (found := interrupts.get(event._interrupt_id(interrupt_name(attempt)))) is not None:
        if found.response is None:
            break  # raised and not answered yet: raised again as it is
        attempt += 1
    return attempt, attempt > 1


def round_of(agent: Agent, call_id: str) -> str | None:
    """The round of the model turn that asked for the call: its assistant message's tool-use ids
    (Strands gives a message no id of its own), None if it is not found."""
    for message in reversed(agent.messages):
        if message["role"] != "assistant":
            continue
        ids = [block["toolUse"]["toolUseId"] for block in message["content"] if "toolUse" in block]
        if call_id in ids:
            return turn_round(None, ids)
    return None
