"""`SignoffMiddleware`: `HumanInTheLoopMiddleware`'s constructor and payloads, signoff's gate.

    agent = create_agent(model, tools, checkpointer=saver, middleware=[
        SignoffMiddleware(interrupt_on={"send_email": True, "read_data": False}),
    ])

Durable (the default): after the model's turn, every gated call becomes a signoff request (one
per (thread_id, tool_call_id), so a re-run of the node finds the same ones), and while any is
undecided the run stops with a LangGraph interrupt in the stock payload shape. The process may
exit; the graph resumes from any process with `Command(resume=...)` (any value: the decisions
are signoff's) and stops again if some are still undecided. Rejected and answered calls get
their ToolMessage there, as the stock middleware does; the others run in the tools node,
exactly once per request (`signoff.idempotency_key()` inside the tool).

Per call (`interrupt_mode="per_call"`, as the stock middleware's): nothing stops after the
model's turn; each gated call is asked about in the tools node, as it starts, and while it is
undecided its own interrupt stops the run, with the stock `ToolApprovalRequest` payload (resume
with `Command(resume={interrupt.id: ...})`, or `resume_when_decided`). Calls nobody gates, and
gated calls already decided, run meanwhile.

Waiting (`wait=True`): each gated call waits for its decision inside the tools node (`gate.run`,
or `gate.arun` under `ainvoke`: no thread per waiter).

A stock `{"decisions": [...]}` resume value from the app's own UI is applied only with
`accept_resume_decisions=True` (recorded as `actor`'s, channel "langchain"; see `.decisions`);
otherwise it approves nothing: signoff's decisions stand, and undecided calls interrupt again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ToolCallRequest
from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.messages import ToolCall as LcToolCall
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

from signoff import Gate, Outcome, Pending, Reply, Request, Scope, Suspended, open_backend

from .asking import CallRules, Found
from .callables import GatedCall, gating
from .calls import args_schema, is_resuming, key, model_turn_call, run_config, signoff_call, tools_node_call
from .config import ScopeFields, parse_interrupt_on, thread_of
from .decisions import ResumeDecisions
from .messages import answer_message, stored_form, tool_result
from .payloads import hitl_request, tool_approval_request
from .rounds import round_of

EDIT_NOTICE = (
    "Note: a human reviewer replaced this tool call before it ran. The call recorded in "
    "your message is the one you produced, not the one that executed. This was "
    "intentional and authorized. Do not re-issue your original call."
)
"""The stock middleware's default `edit_notice`."""
DECIDED_KEY = "signoff_decided"
"""State key: tool_call_id → request id of the current turn's decided calls that may run."""


class SignoffState(AgentState[Any]):
    signoff_decided: NotRequired[Annotated[dict[str, str], PrivateStateAttr]]


class SignoffMiddleware(CallRules, AgentMiddleware[Any, Any, Any]):
    """A drop-in for `HumanInTheLoopMiddleware` that asks through signoff (see the module)."""

    state_schema = SignoffState

    def __init__(
        self,
        interrupt_on: Mapping[str, bool | Mapping[str, Any]] | None = None,
        *,
        description_prefix: str = "Tool execution requires approval",
        edit_notice: str | None = EDIT_NOTICE,
        interrupt_mode: str = "batched",
        gate: Gate | None = None,
        wait: bool = False,
        agent: str | None = None,
        app: str | None = None,
        requester: str | None = None,
        unattended: bool = False,
        accept_resume_decisions: bool = False,
        actor: str | None = None,
    ) -> None:
        super().__init__()
        if accept_resume_decisions and not actor:
            raise ValueError(
                "accept_resume_decisions=True needs actor=: the person (or service) the resume "
                "value's decisions are recorded under, and checked against the rule's approvers"
            )
        if interrupt_mode not in ("batched", "per_call"):
            raise ValueError(f"interrupt_mode must be 'batched' or 'per_call', got {interrupt_mode!r}")
        self.interrupt_mode = interrupt_mode
        # the middleware is a component of the gate: its interrupt_on is its own (Gate.component)
        base = gate if gate is not None else Gate(open_backend())
        self.gate = base.component(tools=parse_interrupt_on(interrupt_on or {}, description_prefix))
        self.wait = wait
        self.edit_notice = edit_notice
        self.description_prefix = description_prefix
        self.accept_resume_decisions = accept_resume_decisions
        self.actor = actor
        self._schemas: dict[str, dict[str, Any]] = {}
        """Each tool's args schema as the model was last offered it: the requests' edit schema."""
        self.scope_fields = ScopeFields(agent=agent, app=app, requester=requester, unattended=unattended)

    # -- the model's turn: which tools it is offered ----------------------------------------

    def wrap_model_call(self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Any]) -> Any:
        self._note_schemas(request)
        return handler(request)

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Awaitable[Any]]
    ) -> Any:
        self._note_schemas(request)
        return await handler(request)

    def _note_schemas(self, request: ModelRequest[Any]) -> None:
        for tool in request.tools:
            if not isinstance(tool, BaseTool) or tool.name in self._schemas:
                continue
            if (schema := args_schema(tool)) is not None:
                self._schemas[tool.name] = schema

    # -- durable: after the model's turn ----------------------------------------------------

    def after_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        if self.wait or self.interrupt_mode == "per_call":
            return None  # calls are asked about in the tools node
        for last in reversed(state["messages"]):  # the last AIMessage (a loop: no generator made)
            if isinstance(last, AIMessage):
                break
        else:
            return {DECIDED_KEY: {}} if state.get(DECIDED_KEY) else None  # _quiet, inlined
        if not last.tool_calls:
            return {DECIDED_KEY: {}} if state.get(DECIDED_KEY) else None
        asks_nowhere = self.gate.asks_nowhere
        for tool_call in last.tool_calls:
            if not asks_nowhere(tool_call["name"]):
                break
        else:  # nobody is asked about these tools: unless they may have been, before a stop
            if not is_resuming():
                return {DECIDED_KEY: {}} if state.get(DECIDED_KEY) else None
        turn = self._turn(state, runtime, last)
        if turn is None:
            return self._quiet(state)
        gated, scope, round = turn
        found = {key(call.tool_call): self._submit(call, scope, round) for call in gated}
        while pending := [call for call in gated if isinstance(found[key(call.tool_call)], Pending)]:
            decisions = self._ask([call.tool_call for call in pending], found, scope.thread_id)
            if decisions is not None:
                decisions[0].apply(decisions[1])
            for call in pending:
                found[key(call.tool_call)] = self._submit(call, scope, round)
        return self._settle([call.tool_call for call in gated], found)

    async def aafter_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        if self.wait or self.interrupt_mode == "per_call":
            return None  # calls are asked about in the tools node
        last = next((m for m in reversed(state["messages"]) if isinstance(m, AIMessage)), None)
        if last is None or not last.tool_calls:
            return self._quiet(state)
        asks_nowhere = self.gate.asks_nowhere
        for tool_call in last.tool_calls:
            if not asks_nowhere(tool_call["name"]):
                break
        else:  # as in `after_model`
            if not is_resuming():
                return self._quiet(state)
        turn = self._turn(state, runtime, last)
        if turn is None:
            return self._quiet(state)
        gated, scope, round = turn
        found: dict[str, Found] = {}
        for call in gated:
            found[key(call.tool_call)] = await self._asubmit(call, scope, round)
        while pending := [call for call in gated if isinstance(found[key(call.tool_call)], Pending)]:
            decisions = self._ask([call.tool_call for call in pending], found, scope.thread_id)
            if decisions is not None:
                await asyncio.to_thread(decisions[0].apply, decisions[1])
            for call in pending:
                found[key(call.tool_call)] = await self._asubmit(call, scope, round)
        return self._settle([call.tool_call for call in gated], found)

    def _turn(
        self, state: AgentState[Any], runtime: Runtime[Any], last: AIMessage
    ) -> tuple[list[GatedCall], Scope, str] | None:
        """The gated calls of the model's last message, the scope and the turn's round; None
        when none asks (a `when` said no). When LangGraph runs the node again to resume it, a
        call the rules no longer ask about may have been decided already: then it is gated
        still, by its decision."""
        resuming = is_resuming()
        if not resuming and not self._may_ask(last.tool_calls):
            return None
        config = run_config()
        gated: list[GatedCall] = []
        for call in last.tool_calls:
            asked = self._asks(call, partial(model_turn_call, call, state, runtime, config))
            if asked is None and resuming and self._decided_before(call, config):
                asked = model_turn_call(call, state, runtime, config)
            if asked is not None:
                gated.append(asked)
        if not gated:
            return None
        # the thread is needed (and checked) only for a turn that asks
        return gated, self.scope_fields.scope_in(thread_of(config)), round_of(last)

    @staticmethod
    def _quiet(state: AgentState[Any]) -> dict[str, Any] | None:
        """Nothing of this turn asks: forget the last turn's decided calls."""
        return {DECIDED_KEY: {}} if state.get(DECIDED_KEY) else None

    def _ask(
        self, pending: list[LcToolCall], found: Mapping[str, Found], thread_id: str
    ) -> tuple[ResumeDecisions, Any] | None:
        """Interrupt for the turn's undecided calls; with `accept_resume_decisions`, the resume
        value (checked by LangGraph before it is saved) and what it decides."""
        waiting = [(call, _waiting(found[key(call)])) for call in pending]
        payload = hitl_request(waiting, thread_id)
        return self._interrupt(payload, [request for _, request in waiting], per_call=False)

    def _interrupt(
        self, payload: dict[str, Any], requests: list[Request], *, per_call: bool
    ) -> tuple[ResumeDecisions, Any] | None:
        if not self.accept_resume_decisions:
            interrupt(payload)
            return None
        assert self.actor is not None
        decisions = ResumeDecisions(self.gate.store, self.actor, requests, per_call=per_call)
        return decisions, interrupt(payload, response_schema=decisions.schema())

    def _settle(self, gated: list[LcToolCall], found: Mapping[str, Found]) -> dict[str, Any]:
        """Every gated call is decided: answers for those that don't run, the rest marked to run."""
        answers: list[ToolMessage] = []
        decided: dict[str, str] = {}
        for call in gated:
            outcome = found[key(call)]
            assert isinstance(outcome, Outcome)
            if not outcome.execute:
                answers.append(answer_message(call, outcome, self._request(outcome)))
            elif outcome.request_id is not None:
                decided[key(call)] = outcome.request_id
        return {"messages": answers, DECIDED_KEY: decided}

    def _request(self, outcome: Outcome) -> Request | None:
        return self.gate.store.get_request(outcome.request_id) if outcome.request_id else None

    # -- the tools node ---------------------------------------------------------------------

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        if self.wait or self.interrupt_mode == "per_call":  # _gated_here's no, inlined
            if self.gate.asks_nowhere(request.tool_call["name"]) and (self.wait or not is_resuming()):
                return handler(request)
        elif not (decided := (request.state or {}).get(DECIDED_KEY)) or key(request.tool_call) not in decided:
            return handler(request)
        gated, resumed = self._gated_here(request)
        if gated is None:
            return handler(request)
        tool_call = request.tool_call
        scope = self.scope_fields.scope_in(thread_of(request.runtime.config))
        call = signoff_call(tool_call, self._schemas, request)
        produced: list[ToolMessage | Command[Any]] = []

        def run_tool(**args: Any) -> dict[str, Any]:
            produced.append(handler(request.override(tool_call={**tool_call, "args": args})))
            return stored_form(produced[-1])

        while True:
            try:
                with gating(gated):
                    reply = self.gate.run(call, run_tool, scope, suspend=not self.wait, resumed=resumed)
            except Suspended as waiting:
                if (decisions := self._ask_per_call(tool_call, waiting, scope.thread_id)) is not None:
                    decisions[0].apply(decisions[1])
                continue  # decided since? (else the next interrupt stops the run)
            return self._result(tool_call, reply, produced)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        if self.wait or self.interrupt_mode == "per_call":
            if self.gate.asks_nowhere(request.tool_call["name"]) and (self.wait or not is_resuming()):
                return await handler(request)
        elif not (decided := (request.state or {}).get(DECIDED_KEY)) or key(request.tool_call) not in decided:
            return await handler(request)
        gated, resumed = self._gated_here(request)
        if gated is None:
            return await handler(request)
        tool_call = request.tool_call
        scope = self.scope_fields.scope_in(thread_of(request.runtime.config))
        call = signoff_call(tool_call, self._schemas, request)
        produced: list[ToolMessage | Command[Any]] = []

        async def run_tool(**args: Any) -> dict[str, Any]:
            produced.append(await handler(request.override(tool_call={**tool_call, "args": args})))
            return stored_form(produced[-1])

        while True:
            try:
                with gating(gated):
                    reply = await self.gate.arun(
                        call, run_tool, scope, suspend=not self.wait, resumed=resumed
                    )
            except Suspended as waiting:
                if (decisions := self._ask_per_call(tool_call, waiting, scope.thread_id)) is not None:
                    await asyncio.to_thread(decisions[0].apply, decisions[1])
                continue
            return self._result(tool_call, reply, produced)

    def _gated_here(self, request: ToolCallRequest) -> tuple[GatedCall | None, bool]:
        """The call as gated if this node gates it (else None), and whether it may have been
        decided already (then its request is looked up whatever the rules say now)."""
        tool_call = request.tool_call
        if self.wait or self.interrupt_mode == "per_call":
            resuming = self.interrupt_mode == "per_call" and not self.wait and is_resuming()
            if self._may_ask([tool_call]):
                gated = self._asks(tool_call, partial(tools_node_call, request))
                if gated is not None:
                    return gated, resuming
            if resuming and self._decided_before(tool_call, request.runtime.config):
                return tools_node_call(request), True
            return None, False
        decided: dict[str, str] | None = (request.state or {}).get(DECIDED_KEY)
        if decided and key(tool_call) in decided:
            return tools_node_call(request), True
        return None, False

    def _ask_per_call(
        self, tool_call: LcToolCall, waiting: Suspended, thread_id: str
    ) -> tuple[ResumeDecisions, Any] | None:
        """Interrupt for one undecided call (per-call mode); a batched turn's calls are decided
        by now, so there a suspended call is a bug, raised as it is."""
        if self.interrupt_mode != "per_call":
            raise waiting
        request = waiting.pending.request
        payload = tool_approval_request(tool_call, request, thread_id)
        return self._interrupt(payload, [request], per_call=True)

    def _result(
        self, tool_call: LcToolCall, reply: Reply, produced: list[ToolMessage | Command[Any]]
    ) -> ToolMessage | Command[Any]:
        return tool_result(tool_call, reply, produced, self._request, self.edit_notice)


def _waiting(found: Found) -> Request:
    assert isinstance(found, Pending)
    return found.request
