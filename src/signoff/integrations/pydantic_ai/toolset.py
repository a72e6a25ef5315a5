"""`SignoffApprovalToolset`: Pydantic AI's `approval_required` with signoff's rules as the predicate.

    toolset = signoff_approval(FunctionToolset([send_email, read_data]))
    agent = Agent(model, toolsets=[toolset], output_type=[str, DeferredToolRequests])

A call the rules gate (`gate.explain`) becomes a signoff request keyed by (thread, tool_call_id)
and, while undecided, is deferred the Pydantic AI way (`ApprovalRequired`): the run ends with
`DeferredToolRequests` (or a `HandleDeferredToolCalls` handler waits). Once decided, the call
runs inside `gate.arun`: signoff's decision wins over whatever `deferred_tool_results` say (a
call approved by the caller but undecided in signoff is deferred again; the args that run are
the person's), and it runs at most once per request, so a replayed resume runs nothing twice
and gives the model the stored result. Tools declared `requires_approval=True` are declared to
signoff's tool layer instead (the store's agent and app layers still apply).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.exceptions import ApprovalRequired
from pydantic_ai.toolsets import AbstractToolset, WrapperToolset
from pydantic_ai.toolsets.abstract import ToolsetTool

from signoff import Gate, Scope, Suspended, ToolCall, ToolEntry, open_backend

from .results import pending_metadata, tool_value
from .scope import ScopeFields, ThreadOf, call_id, round_of


def default_gate() -> Gate:
    """The gate over the store the CLI would use (SIGNOFF_URL + SIGNOFF_TOKEN, else SIGNOFF_DB,
    else the default file)."""
    return Gate(open_backend())


@dataclass
class SignoffApprovalToolset(WrapperToolset[Any]):
    """Wraps a toolset so that calls signoff's rules gate need a person (see the module)."""

    gate: Gate = field(default_factory=default_gate, kw_only=True)
    fields: ScopeFields = field(default_factory=ScopeFields, kw_only=True)
    _declared: set[str] = field(default_factory=set, init=False, repr=False, compare=False)

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        tools = await super().get_tools(ctx)
        for name, tool in tools.items():
            if tool.tool_def.kind != "unapproved":
                continue
            if name not in self._declared:
                self.gate.register_tool(name, ToolEntry(requires_approval=True))
                self._declared.add(name)
            # signoff decides when it asks: the call must reach `call_tool`
            tools[name] = replace(tool, tool_def=replace(tool.tool_def, kind="function"))
        return tools

    def asks(self, name: str, args: dict[str, Any], who: Scope | ScopeFields) -> bool:
        """Whether signoff's rules gate this call (the predicate `approval_required` takes); `who`:
        the scope, or the fields it is made of (the thread does not matter to the rules)."""
        explanation = self.gate.explain(
            name, agent=who.agent, app=who.app, args=args, requester=who.requester
        )
        return explanation.ask

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        if not ctx.tool_call_approved and (
            self.gate.asks_nowhere(name)  # first: the one check a call nobody is asked about pays
            or not self.gate.may_ask(name, self.fields.agent, self.fields.app)
            or not self.asks(name, tool_args, self.fields)
        ):
            return await self.wrapped.call_tool(name, tool_args, ctx, tool)
        fields = self.fields
        thread = fields.thread(ctx)  # needed (and checked) only for a call that may ask
        scope = fields.scope(thread)
        args = tool_args
        if ctx.tool_call_approved:
            # Approved by the caller: the request, if signoff has one, says what was asked.
            request = await asyncio.to_thread(self.gate.store.find_request, thread, call_id(ctx))
            if request is not None:
                args = request.args
        call = ToolCall(
            name=name,
            args=dict(args),
            id=call_id(ctx),
            description=tool.tool_def.description,
            schema=tool.tool_def.parameters_json_schema,
            round=round_of(ctx),
        )

        async def run_tool(**final_args: Any) -> Any:
            # the stored args are JSON: validate them again into what the tool takes
            validated = tool.args_validator.validate_python(final_args)
            return await self.wrapped.call_tool(name, validated, ctx, tool)

        try:
            # approved by the caller: asked about before, so its request's decision stands
            reply = await self.gate.arun(call, run_tool, scope, suspend=True, resumed=ctx.tool_call_approved)
        except Suspended as waiting:
            raise ApprovalRequired(metadata=pending_metadata(waiting.pending)) from None
        return tool_value(reply)


def signoff_approval(
    toolset: AbstractToolset[Any],
    gate: Gate | None = None,
    *,
    agent: str | None = None,
    app: str | None = None,
    requester: str | None = None,
    unattended: bool = False,
    thread_id: ThreadOf | None = None,
) -> SignoffApprovalToolset:
    """`toolset.approval_required(...)` with signoff's rules deciding which calls ask.

    `gate`: the rules, store and policies (default: the store the CLI uses). `agent`, `app`,
    `requester`, `unattended`: the scope the rules are resolved in. `thread_id`: picks the
    thread from the `RunContext` (default: the run's `conversation_id`)."""
    fields = ScopeFields(
        agent=agent, app=app, requester=requester, unattended=unattended, thread_id=thread_id
    )
    chosen = gate if gate is not None else default_gate()
    # a component of the gate: the tools it gates are its own declarations (Gate.component)
    return SignoffApprovalToolset(toolset, gate=chosen.component(), fields=fields)
