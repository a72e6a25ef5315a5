"""`SignoffPlugin`: signoff's gate in front of every tool call of an ADK runner.

A call nobody is asked about (`Gate.asks_nowhere`, then the rules for the call's agent, app and
args) goes on as without signoff. Otherwise it runs inside `gate.arun`, at most once per request
(signoff's execution record), with the args the person decided; the plugin's result is the
tool's, so ADK's own confirmation gate and tool run are skipped for it:

- waiting mode (`wait=True`): the call awaits the decision (until the rule's deadline, or
  `timeout`), then runs, or gives the model what replaced it (see `.results`);
- durable mode: while undecided, the call pauses the run with ADK's own confirmation request
  (`tool_context.request_confirmation`, an `adk_request_confirmation` call naming signoff's request
  in its payload). The run goes on when the session is run again with that call's function
  response (`SignoffPlugin.resume`), in any process that reads the session from ADK's session
  service. The decision is read from signoff's store, never from the response: a response for a
  call still undecided stops the run, nothing run (ADK cannot pause a resumed call again: it
  raises a RuntimeError from `signoff.Suspended`; `resume` sends no response before the
  decision), and one replayed gives the stored result without running the tool again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions import Session
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext

from signoff import Gate, Suspended, ToolCall, ToolEntry

from .._gate import RulesGiven, adapter_gate
from .._rounds import turn_round
from .._scope import ScopeDefaults
from .results import PAUSED, SIGNOFF_KEY, as_result, model_view, pause_hint, pause_payload
from .resume import Decided, Resumed, decided, resume
from .scope import session_scope, who


class SignoffPlugin(BasePlugin):
    """signoff's gate for an ADK runner's tool calls (see the module).

    `gate`: a `signoff.Gate`; without one, `Gate(open_backend(), rules=rules)` (a server when
    `SIGNOFF_URL` is set). `tools`: the tools these agents name as gated or not (`ToolEntry`s: the
    gate's tool layer for this plugin only, `Gate.component`). `agent`, `app`, `requester`,
    `unattended`, `thread_id`: the scope's defaults, overridden per session by
    `session.state["signoff"]` (the thread is the session's id unless one is given). `wait`: await
    decisions inside the run (until `timeout`)."""

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
        name: str = "signoff",
    ) -> None:
        super().__init__(name=name)
        gate = adapter_gate(gate, rules)
        self.gate = gate.component(tools=tools)
        self.nowhere = self.gate.nowhere
        self.defaults = ScopeDefaults(
            thread_id=thread_id, agent=agent, app=app, requester=requester, unattended=unattended
        )
        self.wait = wait
        self.timeout = timeout

    def gate_tools(self, tools: Iterable[Any]) -> list[Any]:
        """The tools, with ADK's own confirmation handed to signoff: a `FunctionTool` declared
        `require_confirmation=True` is named as gated in this plugin's tool layer (it asks unless a
        rule in force turns it off) and its own flag switched off in place, so that ADK does not
        ask a second time with no signoff request behind (a predicate is left to ADK)."""
        listed = list(tools)
        for item in listed:
            if isinstance(item, FunctionTool) and item._require_confirmation is True:
                self.gate.register_tool(item.name, ToolEntry(requires_approval=True))
                item._require_confirmation = False
        return listed

    # -- durable resume ----------------------------------------------------------------------

    async def decided(self, session: Session) -> Decided:
        """The confirmations of the session's paused signoff calls that are decided, and the
        calls still waiting (see `.resume`)."""
        return await decided(self.gate, session, self.defaults)

    async def resume(self, runner: Runner, *, user_id: str, session_id: str, **run_options: Any) -> Resumed:
        """Run the paused session on once every signoff call in it is decided (the tools run, or
        the model sees what replaced them); while any is undecided, run nothing and say which.
        LookupError if signoff paused no call in the session."""
        return await resume(
            self.gate, self.defaults, runner, user_id=user_id, session_id=session_id, **run_options
        )

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        if tool_context.tool_confirmation is None and self.nowhere[tool.name]:
            return None  # the fast path, without a coroutine more
        return await self.before_tool(tool, tool_args, tool_context)

    async def before_tool(
        self, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        """The plugin's callback, also an agent's `before_tool_callback` on its own
        (`LlmAgent(before_tool_callback=plugin.before_tool)`): None lets the call run as without
        signoff; a dict is the call's result."""
        name = tool.name
        resumed = ours(tool_context)
        if not resumed:
            if self.nowhere[name] or not self._asks(name, args, tool_context):
                return None  # the fast path: nobody is asked about this call
            # signoff answers a call it asks about before ADK's own gate could pause it, so a
            # confirmation coming back (even one without signoff's payload) is of signoff's pause
            resumed = tool_context.tool_confirmation is not None
        call_id = tool_context.function_call_id
        if not call_id:
            raise ValueError(f"the call of {name!r} has no id, so signoff cannot find its request again")
        session = tool_context.session
        call = ToolCall(
            name=name,
            args=dict(args),
            id=call_id,
            description=tool.description,
            round=round_of(tool_context, call_id),
        )
        scope = session_scope(session, self.defaults)

        async def run_tool(**final: Any) -> dict[str, Any]:
            if final != args:  # an edit: the after-tool callbacks see the args that ran
                args.clear()
                args.update(final)
            return as_result(await tool.run_async(args=final, tool_context=tool_context))

        try:
            if self.wait:
                reply = await self.gate.arun(call, run_tool, scope, timeout=self.timeout, resumed=resumed)
            else:
                reply = await self.gate.arun(call, run_tool, scope, suspend=True, resumed=resumed)
        except Suspended as paused:
            if resumed:
                # ADK's resume path cannot pause a call again: the run stops here, nothing ran,
                # and `resume` runs it on once it is decided
                raise
            tool_context.request_confirmation(hint=pause_hint(name), payload=pause_payload(paused.pending))
            tool_context.actions.skip_summarization = True  # no model turn on the placeholder
            return dict(PAUSED)
        return model_view(reply)

    def _asks(self, name: str, args: dict[str, Any], tool_context: ToolContext) -> bool:
        agent, app, requester = who(tool_context.session, self.defaults)
        if not self.gate.may_ask(name, agent, app):
            return False
        return self.gate.explain(name, agent=agent, app=app, args=dict(args), requester=requester).ask


def ours(tool_context: ToolContext) -> bool:
    """Whether the call comes back with a confirmation naming signoff's request in its payload
    (then it is signoff's even if the rules no longer ask about the call)."""
    confirmation = tool_context.tool_confirmation
    if confirmation is None:
        return False
    payload = confirmation.payload
    return isinstance(payload, dict) and SIGNOFF_KEY in payload


def round_of(tool_context: ToolContext, call_id: str) -> str | None:
    """The round of the model turn that asked for the call: the id of the session's event that
    carries it (the model's response; one event per turn), None if it is not found."""
    for event in reversed(tool_context.session.events):
        calls = event.get_function_calls()
        if any(call.id == call_id for call in calls):
            return turn_round(event.id, [call.id or "" for call in calls])
    return None
