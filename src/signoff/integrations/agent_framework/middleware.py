"""`SignoffMiddleware`: the function middleware that puts each tool call behind signoff's gate.

A call nobody is asked about (`Gate.asks_nowhere`, then the rules for the call's agent, app and
args) goes on as without signoff. Otherwise it runs inside `gate.arun`, at most once per request
(signoff's execution record), with the args the person decided:

- waiting mode (`wait=True`): the call awaits the decision (until the rule's deadline, or
  `timeout`), then runs, or gives the model what replaced it (see `.results`);
- durable mode: while undecided, the call's result is an approval request naming signoff's
  request, which pauses the run (Agent Framework's own pause: `response.user_input_requests`);
  the run goes on when the session is run again with an approval response
  (`SignoffApprovals.responses`), in any process. The decision is read from signoff's store,
  never from the response: a response for a call still undecided pauses it again, and one replayed
  from a stale saved session gives the model the stored result without running the tool again.

An edit after a pause runs the tool with the person's args directly (Agent Framework refuses
arguments changed after an approval and would ask again); before it, through the chain.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agent_framework import (
    Content,
    FunctionInvocationContext,
    FunctionMiddleware,
    MiddlewareFailure,
)

from signoff import Gate, SignoffError, Suspended, ToolCall, ToolFailed

from .._scope import ScopeDefaults
from .results import approval_request, kept, model_view
from .scope import call_scope, who
from .turns import round_of


class SignoffFailure(MiddlewareFailure):
    """signoff refused the call (an unattended run's cap, a store that is down, a deadline that
    fails the run...): the run stops, the tool did not run. `error` is signoff's error (also the
    `__cause__`); Agent Framework would turn any other exception into a tool result and go on."""

    def __init__(self, error: SignoffError) -> None:
        super().__init__(str(error))
        self.error = error


class SignoffMiddleware(FunctionMiddleware):
    """signoff's gate for an agent's function calls (see the module)."""

    def __init__(
        self, gate: Gate, defaults: ScopeDefaults, *, wait: bool = False, timeout: float | None = None
    ) -> None:
        self.gate = gate
        self.nowhere = gate.nowhere
        self.defaults = defaults
        self.wait = wait
        self.timeout = timeout

    async def process(
        self, context: FunctionInvocationContext, call_next: Callable[[], Awaitable[None]]
    ) -> None:
        name = context.function.name
        response = context.metadata.get("approval_response")
        if response is None and (self.nowhere[name] or not self._asks(context)):
            await call_next()  # the fast path: nobody is asked about this call
            return
        call_id = context.metadata.get("call_id")
        if not call_id:
            raise MiddlewareFailure(
                f"the call of {name!r} has no call_id, so signoff cannot find its request again"
            )
        try:
            scope = call_scope(context, self.defaults, durable=not self.wait)
        except (ValueError, TypeError) as error:  # no session to pause in, a bad state["signoff"]
            raise MiddlewareFailure(str(error)) from error
        args = dict(context.arguments)
        call = ToolCall(
            name=name,
            args=args,
            id=call_id,
            description=context.function.description,
            schema=context.function.parameters(),
            round=round_of(call_id),
        )
        run_tool = _ToolRun(context, call_next, args, approved=response is not None)
        resumed = response is not None  # asked about before: its request's decision stands
        try:
            if self.wait:
                reply = await self.gate.arun(call, run_tool, scope, timeout=self.timeout, resumed=resumed)
            else:
                reply = await self.gate.arun(call, run_tool, scope, suspend=True, resumed=resumed)
        except Suspended as paused:
            occurrence = context.metadata.get("function_call_occurrence_id")
            context.result = approval_request(call_id, occurrence, name, args, paused.pending)
            return
        except ToolFailed:
            raise  # the tool's own failure: an error result for the model, as without signoff
        except SignoffError as error:
            raise SignoffFailure(error) from error
        context.result = model_view(reply)

    def _asks(self, context: FunctionInvocationContext) -> bool:
        """Whether the rules ask about this call. A scope or rules that cannot be read stop the
        run (Agent Framework would make any other exception the tool's result and go on)."""
        name = context.function.name
        try:
            agent, app, requester = who(context, self.defaults)
            if not self.gate.may_ask(name, agent, app):
                return False
            args = dict(context.arguments)
            return self.gate.explain(name, agent=agent, app=app, args=args, requester=requester).ask
        except SignoffError as error:
            raise SignoffFailure(error) from error
        except (ValueError, TypeError) as error:
            raise MiddlewareFailure(str(error)) from error


class _ToolRun:
    """Runs the tool once, with the decided args: the function `gate.arun` calls."""

    def __init__(
        self,
        context: FunctionInvocationContext,
        call_next: Callable[[], Awaitable[None]],
        args: dict[str, Any],
        *,
        approved: bool,
    ) -> None:
        self.context = context
        self.call_next = call_next
        self.args = args
        self.approved = approved

    async def __call__(self, **final: Any) -> Any:
        context = self.context
        if final == self.args:
            await self.call_next()
            return kept(context.result)
        if self.approved:
            # Agent Framework binds an approval to the args it approved: a fresh context runs
            # the tool with the person's (session and runtime kwargs kept)
            fresh = FunctionInvocationContext(
                function=context.function,
                arguments=final,
                session=context.session,
                kwargs=context.kwargs,
                tools=context.tools,
                parent_service_session_state_keys=context.parent_service_session_state_keys,
            )
            result: list[Content] = await context.function.invoke(
                arguments=final, context=fresh, tool_call_id=context.metadata.get("call_id")
            )
            return kept(result)
        context.arguments = final
        await self.call_next()
        return kept(context.result)
