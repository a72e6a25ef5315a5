"""`SignoffApproval`: an Agents SDK run whose approvals are signoff's, durable across processes.

    approval = SignoffApproval()                     # the store the CLI would use
    agent = Agent(name="mail", tools=approval.gate_tools([send_email, lookup]), model=...)
    run = await approval.run(agent, "mail alice", thread_id="ticket-42")
    if run.paused:                                   # the process may exit now
        ...
    run = await approval.resume(agent, "ticket-42")  # any process, once decided (or wait=True)

A run that stops with `result.interruptions` has its `RunState` (`to_string()`: the calls and
their arguments) saved in signoff's store, one per thread, never handed to the caller, and then
each interruption made a signoff request (keyed by the thread_id and the call_id; see
`.interruptions`). Calls already decided (a policy, an unattended run's rule) are applied at once
and the run goes on. `resume` loads the saved state (`RunState.from_string`), applies the
decisions and runs on (`Runner.run(agent, state)`); still undecided, it changes nothing and says
so. When the run finishes, its saved state is deleted.

`wait=True` keeps the state the same way before it waits: a process that dies while waiting
leaves a run that `resume` continues in another process, as if it had paused. Its approved
calls run through signoff's execution record, so a call that ran before the crash is not run again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from agents import Agent, FunctionTool, Runner, RunResult, RunState

from signoff import Gate, Pending

from .._gate import RulesGiven, adapter_gate
from .._kept import KeptRuns
from .._scope import ScopeDefaults
from .context import bound_thread, scope_of
from .interruptions import Found, apply, submit_all
from .tools import gate_tool, gated_function_tool

STATE_KIND = "openai-agents"
"""The `kind` of the run states this adapter saves."""


@dataclass(frozen=True)
class SignoffRun:
    """Where a run stands: finished (`result.final_output`), or paused on `pending` requests.

    `result` is the SDK's last `RunResult`; None when `resume` found the calls still undecided and
    ran nothing."""

    thread_id: str
    result: RunResult | None
    pending: list[Pending] = field(default_factory=list)

    @property
    def paused(self) -> bool:
        return bool(self.pending)

    @property
    def final_output(self) -> Any:
        return None if self.paused or self.result is None else self.result.final_output


class SignoffApproval:
    """signoff's gate for Agents SDK runs; see the module.

    `gate`: a `signoff.Gate`; without one, `Gate(open_backend(), rules=rules)` (rules: a file, a
    `RuleSet` or its dict; None: the rules kept in the store). `agent`, `app`, `requester`,
    `unattended`: the scope's defaults, overridden per run by the run context's `"signoff"`.
    """

    def __init__(
        self,
        gate: Gate | None = None,
        *,
        rules: RulesGiven = None,
        agent: str | None = None,
        app: str | None = None,
        requester: str | None = None,
        unattended: bool = False,
    ) -> None:
        self.gate = adapter_gate(
            gate, rules
        ).component()  # its gated tools are its own declarations (Gate.component)
        self.defaults = ScopeDefaults(agent=agent, app=app, requester=requester, unattended=unattended)

    # -- tools --------------------------------------------------------------------------------

    def gate_tool(self, tool: FunctionTool) -> FunctionTool:
        """Make `tool`'s approval signoff's, in place (see `.tools`); returns it."""
        return gate_tool(tool, self.gate, self.defaults)

    def gate_tools(self, tools: Iterable[Any]) -> list[Any]:
        """`gate_tool` for each function tool; other tools are returned as they are."""
        return [self.gate_tool(tool) if isinstance(tool, FunctionTool) else tool for tool in tools]

    def function_tool(self, func: Any = None, **options: Any) -> Any:
        """`agents.function_tool` (same options), gated: `@approval.function_tool`."""
        return gated_function_tool(self.gate, self.defaults, func, **options)

    # -- runs ---------------------------------------------------------------------------------

    async def run(
        self,
        agent: Agent[Any],
        input: Any,
        *,
        thread_id: str,
        context: Any = None,
        wait: bool = False,
        **runner_options: Any,
    ) -> SignoffRun:
        """`Runner.run(agent, input, context=...)` under `thread_id`; pauses (see the module), or
        with `wait=True` waits for each decision until the rule's deadline."""
        with bound_thread(self.defaults, thread_id, context):
            result = await Runner.run(agent, input, context=context, **runner_options)
            return await self._settle(agent, thread_id, result, wait, runner_options)

    async def resume(
        self, agent: Agent[Any], thread_id: str, *, wait: bool = False, **runner_options: Any
    ) -> SignoffRun:
        """Continue `thread_id`'s paused run from its saved state, in any process (see the module)."""
        state = await RunState.from_string(agent, await self._kept().aload(thread_id))
        context = run_context(state)
        with bound_thread(self.defaults, thread_id, context):
            found = await self._found(agent, state.get_interruptions(), context, wait=False)
            if (pending := _pending(found)) and wait:
                found = await self._found(agent, state.get_interruptions(), context, wait=True)
            elif pending:
                return SignoffRun(thread_id, None, pending)
            apply(state, found)
            result = await Runner.run(agent, state, **runner_options)
            return await self._settle(agent, thread_id, result, wait, runner_options)

    async def _settle(
        self, agent: Agent[Any], thread_id: str, result: RunResult, wait: bool, options: dict[str, Any]
    ) -> SignoffRun:
        """Turn the result's interruptions into requests; apply and run on while all are decided.

        The state is kept before the requests are made, so that no request waits for a run that
        nobody could resume; with `wait`, the decisions are then awaited (see the module)."""
        kept = self._kept()
        while result.interruptions:
            state = result.to_state()
            context = result.context_wrapper.context
            await kept.asave(thread_id, state.to_string())
            found = await self._found(agent, result.interruptions, context, wait=False)
            if (pending := _pending(found)) and wait:
                found = await self._found(agent, result.interruptions, context, wait=True)
            elif pending:
                return SignoffRun(thread_id, result, pending)
            apply(state, found)
            result = await Runner.run(agent, state, **options)
        await kept.aforget(thread_id)
        return SignoffRun(thread_id, result)

    async def _found(self, agent: Agent[Any], items: Any, context: Any, *, wait: bool) -> list[Found]:
        scope = scope_of(context, self.defaults, thread_required=True)
        return await submit_all(self.gate, agent, list(items), scope, wait=wait)

    def _kept(self) -> KeptRuns:
        return KeptRuns(self.gate, STATE_KIND, "Agents SDK")


def run_context(state: RunState[Any, Any]) -> Any:
    """The run context a resumed state continues with (the object its tools get as `ctx.context`).

    RunState 0.24 has no public accessor for it: `RunResult.context_wrapper` is public, but a
    state read back with `from_string` has no result yet, and `to_json()` gives a serialized copy,
    not the object the run goes on with. So this reads the one private attribute, `_context`
    (the `RunContextWrapper` that `Runner.run(agent, state)` resumes with), and nowhere else."""
    wrapper = getattr(state, "_context", None)
    return wrapper.context if wrapper is not None else None


def _pending(found: list[Found]) -> list[Pending]:
    return [entry.result for entry in found if isinstance(entry.result, Pending)]
