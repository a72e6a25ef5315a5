"""`SignoffApprovals`: signoff's rules, inbox and exactly-once runs for an Agent Framework agent.

    approvals = SignoffApprovals()                        # durable: the run pauses
    agent = Agent(client=..., tools=[transfer], middleware=approvals.middleware)
    session = agent.create_session()
    response = await agent.run("pay bob", session=session)
    if response.user_input_requests:                      # paused: save the session, exit
        saved = session.to_dict()
    ...                                                   # decide in signoff; then, anywhere:
    session = AgentSession.from_dict(saved)
    resumed = await approvals.resume(agent, session)      # runs on once every call is decided

`SignoffApprovals(wait=True)`: the calls await their decisions inside the run instead.
`tools=approvals.gate_tools([...])` hands tools declared `approval_mode="always_require"` to
signoff (named as gated in code, MAF's own pause switched off for them).
`approvals.keep(session)` / `approvals.kept(thread_id)` keep the saved session in signoff's
store (server side in remote mode), for a process that has nowhere else to keep it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_framework import Agent, AgentResponse, AgentSession, Content, FunctionTool, Message

from signoff import Gate, Outcome, Pending, ToolCall, ToolEntry

from .._gate import RulesGiven, adapter_gate
from .._kept import KeptRuns
from .._scope import ScopeDefaults
from .middleware import SignoffMiddleware
from .results import SIGNOFF_KEY
from .scope import session_scope
from .turns import TurnRecorder

STATE_KIND = "agent-framework"
"""The `kind` of the sessions `keep` saves in signoff's store."""


@dataclass(frozen=True)
class Decided:
    """A paused session's signoff calls: the approval responses of those decided, and those still
    waiting for a person."""

    responses: list[Content] = field(default_factory=list)
    pending: list[Pending] = field(default_factory=list)


@dataclass(frozen=True)
class Resumed:
    """Where a resumed session stands: run on (`response`), or still waiting on `pending`."""

    response: AgentResponse[Any] | None
    pending: list[Pending] = field(default_factory=list)

    @property
    def paused(self) -> bool:
        return bool(self.pending) or bool(self.response is not None and self.response.user_input_requests)


class SignoffApprovals:
    """signoff's gate for Agent Framework agents; see the module.

    `gate`: a `signoff.Gate`; without one, `Gate(open_backend(), rules=rules)`. `tools`: the
    tools this agent names as gated or not (`ToolEntry`s: the gate's tool layer for this agent
    only, `Gate.component`). `agent`, `app`, `requester`, `unattended`, `thread_id`: the scope's
    defaults, overridden per session by `session.state["signoff"]` (the thread is the session's
    id unless one is given). `wait`: await decisions inside the run (until `timeout`)."""

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
        self.defaults = ScopeDefaults(
            thread_id=thread_id, agent=agent, app=app, requester=requester, unattended=unattended
        )
        self.function_middleware = SignoffMiddleware(self.gate, self.defaults, wait=wait, timeout=timeout)
        self.middleware: list[Any] = [TurnRecorder(), self.function_middleware]
        """What the agent takes: `Agent(..., middleware=approvals.middleware)` (the function
        middleware, and a chat middleware that tells it which calls were one model turn)."""

    def gate_tools(self, tools: Iterable[Any]) -> list[Any]:
        """The tools, with Agent Framework's own approval handed to signoff: a tool declared
        `approval_mode="always_require"` is named as gated in this agent's tool layer (it asks
        unless a rule in force turns it off) and set to `never_require` in place, so that its calls
        reach signoff's middleware (MAF would pause them first, with no signoff request behind)."""
        listed = list(tools)
        for item in listed:
            if isinstance(item, FunctionTool) and item.approval_mode == "always_require":
                self.gate.register_tool(item.name, ToolEntry(requires_approval=True))
                item.approval_mode = "never_require"
        return listed

    # -- durable resume ----------------------------------------------------------------------

    def decided(self, session: AgentSession, requests: Iterable[Content] | None = None) -> Decided:
        """The approval responses for the session's paused signoff calls that are decided, and
        the calls still waiting. `requests`: the paused response's `user_input_requests`; by
        default, the approval requests the session keeps pending."""
        scope = session_scope(session, self.defaults)
        found = Decided()
        for request in open_requests(session) if requests is None else requests:
            ours = (request.additional_properties or {}).get(SIGNOFF_KEY)
            call = request.function_call
            if ours is None or call is None or call.name is None or call.call_id is None:
                continue  # not paused by signoff: left to the caller
            asked = ToolCall(name=call.name, args=dict(call.parse_arguments() or {}), id=call.call_id)
            result = self.gate.submit(asked, scope, resumed=True)
            if isinstance(result, Pending):
                found.pending.append(result)
                continue
            found.responses.append(_response(request, result))
        return found

    async def resume(self, agent: Agent[Any], session: AgentSession, **run_options: Any) -> Resumed:
        """Run the paused session on once every signoff call in it is decided (the decisions are
        signoff's: the tools run, or the model sees what replaced them); while any is undecided,
        run nothing and say which. LookupError if signoff paused no call in the session."""
        decided = self.decided(session)
        if decided.pending:
            return Resumed(None, decided.pending)
        if not decided.responses:
            raise LookupError(
                f"session {session.session_id!r} has no call paused by signoff: nothing to resume "
                "(a session saved after its run went on, or paused by something else)"
            )
        message = Message(role="user", contents=decided.responses)
        return Resumed(await agent.run(message, session=session, **run_options))

    # -- keeping a session in signoff's store ----------------------------------------------

    def keep(self, session: AgentSession) -> str:
        """Keep the session (`to_dict`) in signoff's store under its thread; returns the thread."""
        thread = session_scope(session, self.defaults).thread_id
        assert thread is not None  # session_scope always names one
        self._kept().save(thread, json.dumps(session.to_dict()))
        return thread

    def kept(self, thread_id: str) -> AgentSession:
        """The session kept for `thread_id` (LookupError if none)."""
        return AgentSession.from_dict(json.loads(self._kept().load(thread_id)))

    def forget(self, thread_id: str) -> None:
        self._kept().forget(thread_id)

    def _kept(self) -> KeptRuns:
        return KeptRuns(self.gate, STATE_KIND, "Agent Framework")


def open_requests(session: AgentSession) -> list[Content]:
    """The approval requests the session keeps pending (Agent Framework keeps them in
    `state["tool_approval"]["pending_approval_requests"]`)."""
    approval = session.state.get("tool_approval") or {}
    found = []
    for raw in approval.get("pending_approval_requests") or []:
        request = raw if isinstance(raw, Content) else Content.from_dict(raw)
        if request.type == "function_approval_request":
            found.append(request)
    return found


def _response(request: Content, outcome: Outcome) -> Content:
    """The approval response that lets the call reach signoff's middleware again: approved for
    Agent Framework whatever the decision (its own rejection would hide signoff's text), the
    decision named for the reader; the middleware reads the decision from signoff's store."""
    response = request.to_function_approval_response(True)
    response.additional_properties = {
        **(response.additional_properties or {}),
        SIGNOFF_KEY: {
            "request_id": outcome.request_id,
            "decision": outcome.decision,
            "status": outcome.status,
            "actor": outcome.actor,
        },
    }
    return response
