"""`SignoffApproval`: an Agents SDK run whose approvals are signoff's, durable across processes.

    approval = SignoffApproval()                     # the store the CLI would use
    agent = Agent(name="mail", tools=approval.gate_tools([send_email, lookup]), model=...)
    run = await approval.run(agent, "mail alice", thread_id="ticket-42")
    if run.paused:                                   # the process may exit now
        ...
    run = await approval.resume(agent, "ticket-42")  # any process, once decided (or wait=True)

A run that stops with `result.interruptions` has each one made a signoff request (keyed by the
thread_id and the call_id; see `.interruptions`), and its `RunState` (`to_string()`: the calls
and their arguments) saved in signoff's store, one per thread, never handed to the caller.
Calls already decided (a policy, an unattended run's rule) are applied at once and the run goes
on. `resume` loads the saved state (`RunState.from_string`), applies the decisions and runs on
(`Runner.run(agent, state)`); still undecided, it changes nothing and says so. When the run
finishes, its saved state is deleted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from agents import Agent, FunctionTool, Runner, RunResult, RunState

from signoff import ConfigError, Gate, Pending, RuleSet, open_backend

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
        rules: RuleSet | dict[str, Any] | str | None = None,
        agent: str | None = None,
        app: str | None = None,
        requester: str | None = None,
        unattended: bool = False,
    ) -> None:
        if gate is not None and rules is not None:
            raise ValueError("give either gate= or rules=, not both (the gate has its rules)")
        if gate is None:
            gate = Gate(
                open_backend(), rules=RuleSet.model_validate(rules) if isinstance(rules, dict) else rules
            )
        self.gate = gate.component()  # its gated tools are its own declarations (Gate.component)
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
        record = await asyncio.to_thread(self._states().load_run_state, thread_id)
        if record is None:
            raise LookupError(f"no paused Agents SDK run is kept for thread {thread_id!r}")
        if record.kind != STATE_KIND:
            raise ValueError(f"thread {thread_id!r} keeps a {record.kind!r} run state, not an Agents SDK one")
        state = await RunState.from_string(agent, record.state)
        context = run_context(state)
        with bound_thread(self.defaults, thread_id, context):
            found = await self._found(agent, state.get_interruptions(), context, wait)
            if pending := _pending(found):
                return SignoffRun(thread_id, None, pending)
            apply(state, found)
            result = await Runner.run(agent, state, **runner_options)
            return await self._settle(agent, thread_id, result, wait, runner_options)

    async def _settle(
        self, agent: Agent[Any], thread_id: str, result: RunResult, wait: bool, options: dict[str, Any]
    ) -> SignoffRun:
        """Turn the result's interruptions into requests; apply and run on while all are decided."""
        while result.interruptions:
            state = result.to_state()
            found = await self._found(agent, result.interruptions, result.context_wrapper.context, wait)
            if pending := _pending(found):
                await asyncio.to_thread(
                    self._states().save_run_state, thread_id, state.to_string(), kind=STATE_KIND
                )
                return SignoffRun(thread_id, result, pending)
            apply(state, found)
            result = await Runner.run(agent, state, **options)
        await asyncio.to_thread(self._states().delete_run_state, thread_id)
        return SignoffRun(thread_id, result)

    async def _found(self, agent: Agent[Any], items: Any, context: Any, wait: bool) -> list[Found]:
        scope = scope_of(context, self.defaults, thread_required=True)
        return await submit_all(self.gate, agent, list(items), scope, wait=wait)

    def _states(self) -> Any:
        store = self.gate.store
        if not callable(getattr(store, "save_run_state", None)):
            raise ConfigError(
                f"{type(store).__name__} keeps no run states: a paused Agents SDK run needs a signoff "
                "store or a Client of a signoff server"
            )
        return store


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
