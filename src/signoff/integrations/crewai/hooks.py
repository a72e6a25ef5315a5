"""`SignoffHooks`: signoff's gate in every CrewAI tool call, through CrewAI's tool-call hooks.

A call nobody is asked about (`Gate.asks_nowhere`, then the rules for the call's agent, app and
args) goes on as without signoff. Otherwise the before-hook blocks CrewAI's own run of the tool
and, in the same thread, waits for the decision (CrewAI's hooks are synchronous, and a crew has no
tool-level pause to stop at: waiting mode only, the run stays in its process) and runs the tool
inside `gate.run`, at most once per request (signoff's execution record), with the args the
person decided. The after-hook, which CrewAI runs on a blocked call too, gives the model the
tool's result or what replaced it (see `.results`) in place of CrewAI's "blocked" text.

Fail closed: CrewAI runs a tool when a hook raises, so the before-hook never raises: anything it
cannot do (the rules unreadable, a store down, an unattended run's cap, a deadline) blocks the
call and the model is told why.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping
from types import TracebackType
from typing import Any

from crewai.tools.structured_tool import CrewStructuredTool
from crewai.utilities.string_utils import sanitize_tool_name

from signoff import Gate, ToolCall, ToolEntry

from .._gate import RulesGiven, adapter_gate
from .._scope import ScopeDefaults
from .registry import BLOCKED, INSTALLED
from .results import failed, model_view, refused
from .scope import call_scope, round_of


class SignoffHooks:
    """signoff's gate for CrewAI's tool calls (see the module); `install()` it, or use it as a
    context manager around the crews' runs.

    `gate`: a `signoff.Gate`; without one, `Gate(open_backend(), rules=rules)` (a server when
    `SIGNOFF_URL` is set). `tools`: the tools these agents name as gated or not (`ToolEntry`s,
    under CrewAI's sanitized tool names: "Send Email" is `send_email`): the gate's tool layer for
    these hooks only (`Gate.component`). `agents`: the CrewAI agents these hooks answer for (by
    CrewAI's `agent.key`, the hash of its role, goal and backstory, which CrewAI's copies of an
    agent keep); None: every agent no other installed hooks name. `agent`, `app`, `requester`,
    `unattended`, `thread_id`: the scope (the thread is the crew's unless given). `timeout`:
    seconds to wait for a decision before the call is refused (the rule's deadline otherwise)."""

    def __init__(
        self,
        gate: Gate | None = None,
        *,
        rules: RulesGiven = None,
        tools: Mapping[str, ToolEntry] | None = None,
        agents: Collection[Any] | None = None,
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
        self.agent_keys = None if agents is None else frozenset(agent_key(item) for item in agents)
        self.defaults = ScopeDefaults(
            thread_id=thread_id, agent=agent, app=app, requester=requester, unattended=unattended
        )
        self.timeout = timeout

    # -- installing ---------------------------------------------------------------------------

    def install(self) -> SignoffHooks:
        """Put these hooks in front of the process's CrewAI tool calls (those of `agents`).
        ValueError if other installed hooks cover the same agents."""
        INSTALLED.add(self)
        return self

    def uninstall(self) -> bool:
        """Take these hooks out again; False if they were not installed."""
        return INSTALLED.remove(self)

    def __enter__(self) -> SignoffHooks:
        return self.install()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.uninstall()

    # -- the call -----------------------------------------------------------------------------

    def before(self, ctx: Any) -> bool | None:
        """The before-hook for a call these hooks cover and the rules may ask about: None lets
        it run as without signoff; False blocks CrewAI's run, the model's text kept for the
        after-hook. Never raises (see the module)."""
        name: str = ctx.tool_name
        try:
            if not self._asks(name, ctx):
                return None
            text = self._decide_and_run(name, ctx)
        except Exception as error:
            text = refused(name, error)
        BLOCKED.keep(ctx.tool_input, name, text)
        return False

    def _asks(self, name: str, ctx: Any) -> bool:
        defaults = self.defaults
        if not self.gate.may_ask(name, defaults.agent, defaults.app):
            return False
        args = dict(ctx.tool_input)
        explained = self.gate.explain(
            name, agent=defaults.agent, app=defaults.app, args=args, requester=defaults.requester
        )
        return explained.ask

    def _decide_and_run(self, name: str, ctx: Any) -> str:
        tool = _runnable(ctx)
        call = ToolCall(
            name=name,
            args=dict(ctx.tool_input),
            # CrewAI gives no call id, and the same args asked again (a crew run twice, a model
            # repeating a call) are a new call: each is a request of its own, never a replay
            id=f"crewai-{uuid.uuid4().hex}",
            description=getattr(tool, "description", None),
            round=round_of(ctx),
        )
        run = _ToolRun(tool, ctx.tool_input)
        try:
            reply = self.gate.run(call, run, call_scope(ctx, self.defaults), timeout=self.timeout)
        except Exception as error:
            if run.raised is error:
                return failed(error)
            raise
        return model_view(reply)


class _ToolRun:
    """Runs the tool once with the decided args: the function `gate.run` calls. The call's
    `tool_input` is updated to the args that ran (CrewAI's events and later hooks show them)."""

    def __init__(self, tool: Any, tool_input: dict[str, Any]) -> None:
        self.tool = tool
        self.tool_input = tool_input
        self.raised: BaseException | None = None

    def __call__(self, **final: Any) -> Any:
        if final != self.tool_input:
            self.tool_input.clear()
            self.tool_input.update(final)
        try:
            if isinstance(self.tool, CrewStructuredTool):
                return self.tool.invoke(dict(final))
            return self.tool.run(**final)
        except Exception as error:
            self.raised = error
            raise


def _runnable(ctx: Any) -> Any:
    """The tool the call names: the context's `CrewStructuredTool`, else (CrewAI's native
    function-calling path may give none) the agent's tool of that name. LookupError if neither:
    signoff runs the tool itself, so a call it cannot run is refused."""
    if ctx.tool is not None:
        return ctx.tool
    for tool in getattr(ctx.agent, "tools", None) or []:
        if sanitize_tool_name(tool.name) == ctx.tool_name:
            return tool
    raise LookupError(f"CrewAI named no tool {ctx.tool_name!r} for this call, so signoff cannot run it")


def agent_key(agent: Any) -> Any:
    """An agent's key in `agents=`: CrewAI's `agent.key` (a hash of its role, goal and backstory
    as written, kept by the copies CrewAI makes of an agent, as `kickoff_for_each` does, where
    its `id` is new), or the value itself (a key)."""
    found = getattr(agent, "key", None)
    return agent if found is None else found
