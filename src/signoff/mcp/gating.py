"""`tools/call` through the gate: pass it through, or ask, wait, and answer what was decided.

A call the rules do not ask about goes to the upstream as it came and its answer comes back as
the upstream sent it. A gated call becomes a signoff request (tool `SERVICE.<tool>`, its
schema, description and annotations, the proxy's own agent, the client's name recorded as what
it calls itself) and waits; while it waits the client gets progress notifications (when it gave
a progress token). Then:

- approve / edit: the upstream runs it (edited args, after the edit was checked against the
  tool's inputSchema), exactly once per request (`gate.arun`'s execution record);
- reject: an `isError` result with the rejection text; respond: the person's answer as text;
- expiry: the rule's `on_expire` outcome; `--max-wait`: "awaits approval, call again";
- the client cancels: the request is cancelled; the upstream dies: a clear error;
- the call was running when an earlier proxy stopped (a retry under the same `--thread`): "in
  doubt", an `isError` result saying what to check; never asked again, never run again.

The agent whose rules apply is the proxy's (`--agent`, or through a server its token's user),
never the name the MCP client gives itself: a client may call itself anything.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio
import mcp.types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from ..calls import Scope, ToolCall
from ..errors import (
    ExecutionError,
    ExecutionInDoubt,
    ExecutionInProgress,
    InvalidArguments,
    RequestExpired,
    ReviewTimeout,
    SignoffError,
)
from ..gate import Gate
from ..outcome import Reply
from ..pending import Pending
from ..requests import Request
from ..rules.resolve import Resolver
from ..running import waiting_to_run
from ..validation import validate_args
from ..visible import visible
from . import elicit
from .catalog import ToolCatalog
from .earlier import earlier_calls
from .results import awaiting_result, in_doubt_result, outcome_result, text_result, with_note
from .sessions import McpSession, Sessions
from .upstream import Upstream, UpstreamGone

log = logging.getLogger("signoff.mcp")

CANCEL_CHANNEL = "mcp"


CLIENT_NAME_LIMIT = 200
"""A client's name is recorded up to this many characters."""


@dataclass(frozen=True)
class GateOptions:
    service: str
    agent: str | None = None
    """The agent whose rules apply: the proxy's own (`--agent`, or through a server the token's user)."""
    max_wait: float | None = None
    progress_interval: float = 1.0
    inbox: str | None = None
    """The server's address, for the link in an "awaits approval" answer."""
    decider: elicit.ElicitDecider | None = None
    """Set with `--elicit`: who an in-band answer is recorded as."""


class CallGate:
    def __init__(
        self,
        gate: Gate,
        options: GateOptions,
        upstream: Callable[[], Upstream],
        catalog: ToolCatalog,
        sessions: Sessions,
    ) -> None:
        self.gate = gate
        self.options = options
        self._upstream = upstream
        self.catalog = catalog
        self.sessions = sessions
        self.resolver: Resolver = gate.resolver()

    async def keep_rules_fresh(self) -> None:
        """Re-read the rules as often as the gate would (stored rules change under us)."""
        while True:
            await anyio.sleep(max(self.gate.rules_refresh, 0.05))
            try:
                self.resolver = await anyio.to_thread.run_sync(self.gate.resolver)
            except SignoffError as exc:
                log.warning("could not re-read the rules: %s", exc)

    def asks(self, tool: str, args: dict[str, Any], marks: dict[str, Any]) -> bool:
        """Whether the rules ask about this call of the upstream's `tool` (by the proxy's agent)."""
        full_name = f"{self.options.service}.{tool}"
        return self.resolver.explain(full_name, self.options.agent, None, args, None, marks).ask

    async def call(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> dict[str, Any] | types.InputRequiredResult:
        upstream = self._upstream()
        try:
            tool = await self.catalog.get(upstream, params.name)
        except UpstreamGone as exc:
            raise MCPError(code=types.INTERNAL_ERROR, message=str(exc)) from None
        if tool is None:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"unknown tool {params.name!r}: the upstream "
                f"{self.options.service!r} has no such tool",
            )
        args = dict(params.arguments or {})
        marks = self.catalog.marks(tool)
        full_name = f"{self.options.service}.{params.name}"
        if not self.asks(params.name, args, marks):
            return await self._forward(ctx, upstream, params.name, args, offset=0)
        try:
            validate_args(tool.input_schema, args)
        except InvalidArguments as exc:
            return text_result(f"The call to {params.name} was refused: {exc.message}", is_error=True)
        session = self.sessions.get(http_session=http_session_of(ctx))
        agent = self.options.agent
        try:
            key = await session.key_for(
                params.name, args, partial(earlier_calls, self.gate.store, session.thread_id, agent)
            )
        except SignoffError as exc:  # the store cannot say which calls came before: ask nobody, run nothing
            return text_result(
                f"The call to {full_name} could not be gated right now ({exc}). Nothing ran. Call the "
                "tool again with the same arguments to continue.",
                is_error=True,
            )
        call = ToolCall(
            name=full_name,
            args=args,
            id=key,
            description=tool.description,
            schema=tool.input_schema,
            annotations=marks,
        )
        scope = Scope(thread_id=session.thread_id, agent=agent, client=shown_client(ctx))
        try:
            with waiting_to_run():
                return await self._gated(ctx, upstream, session, call, scope, params)
        except UpstreamGone as exc:
            raise MCPError(code=types.INTERNAL_ERROR, message=str(exc)) from None

    async def _gated(
        self,
        ctx: ServerRequestContext[Any, Any],
        upstream: Upstream,
        session: McpSession,
        call: ToolCall,
        scope: Scope,
        params: types.CallToolRequestParams,
    ) -> dict[str, Any] | types.InputRequiredResult:
        assert call.id is not None
        ticks = [0]
        tool_name = params.name

        async def run_upstream(**final_args: Any) -> dict[str, Any]:
            return await self._forward(ctx, upstream, tool_name, final_args, offset=ticks[0])

        try:
            asked = await self._ask_in_band(ctx, session, call, scope, params)
            if asked is not None:
                return asked
            reply = await self._wait(ctx, call, scope, ticks, run_upstream)
        except ReviewTimeout:
            session.park(call.id)
            request = await self._request(scope, call)
            return awaiting_result(request, waited=self.options.max_wait or 0, inbox=self.options.inbox)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._cancel(scope, call, "the MCP client cancelled the call")
            raise
        except RequestExpired as exc:
            return text_result(str(exc), is_error=True)
        except (ExecutionInDoubt, ExecutionInProgress) as exc:
            session.park(call.id)  # until a person decides, every retry hears the same
            return await self._in_doubt(scope, call, exc)
        except ExecutionError as exc:
            return text_result(str(exc), is_error=True)
        except SignoffError as exc:  # the server is away, ...: the request may still be open
            session.park(call.id)
            return text_result(
                f"The call to {call.name} could not be gated right now ({exc}). Call the tool again "
                "with the same arguments to continue.",
                is_error=True,
            )
        if upstream.closed.is_set() and not reply.executed and not reply.replayed:
            raise UpstreamGone(f"the upstream MCP server ({upstream.target.describe()}) is not running")
        outcome = reply.outcome
        if not outcome.execute:
            return outcome_result(outcome)
        result: dict[str, Any] = reply.value
        if outcome.decision == "edit" and outcome.feedback:
            result = with_note(result, outcome.feedback)
        return result

    async def _wait(
        self,
        ctx: ServerRequestContext[Any, Any],
        call: ToolCall,
        scope: Scope,
        ticks: list[int],
        run_upstream: Forward,
    ) -> Reply:
        """`gate.arun`, with progress ticks and the in-band question alongside while it waits."""
        replies: list[Reply] = []
        errors: list[Exception] = []
        async with anyio.create_task_group() as alongside:
            if progress_token(ctx) is not None:
                alongside.start_soon(self._tick, ctx, call, scope, ticks)
            try:
                if self._may_elicit(ctx) and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
                    planned = await self.gate.asubmit(call, scope)
                    if isinstance(planned, Pending):
                        alongside.start_soon(self._elicit_meanwhile, ctx, planned.request)
                replies.append(await self.gate.arun(call, run_upstream, scope, timeout=self.options.max_wait))
            except Exception as exc:  # raised below, outside the task group (not as an ExceptionGroup)
                errors.append(exc)
            finally:
                alongside.cancel_scope.cancel()
        if errors:
            raise errors[0]
        return replies[0]

    async def _forward(
        self,
        ctx: ServerRequestContext[Any, Any],
        upstream: Upstream,
        name: str,
        args: dict[str, Any],
        *,
        offset: int,
    ) -> dict[str, Any]:
        """The call as the upstream answers it; its progress passed on (after ours, when we waited)."""
        on_progress = None
        if progress_token(ctx) is not None:

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                shifted_total = None if total is None else total + offset
                await ctx.session.report_progress(progress + offset, shifted_total, message)

        request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=args))
        return await upstream.request(request, on_progress=on_progress, timeout=upstream.timeout)

    async def _tick(
        self, ctx: ServerRequestContext[Any, Any], call: ToolCall, scope: Scope, ticks: list[int]
    ) -> None:
        request: Request | None = None
        while True:
            if request is None:
                request = await anyio.to_thread.run_sync(
                    lambda: self.gate.store.find_request(scope.thread_id, call.id or "")
                )
            ticks[0] += 1
            where = f" (request {request.id})" if request is not None else ""
            await ctx.session.report_progress(ticks[0], None, f"waiting for approval{where}")
            await anyio.sleep(self.options.progress_interval)

    def _may_elicit(self, ctx: ServerRequestContext[Any, Any]) -> bool:
        if self.options.decider is None:
            return False
        capabilities = ctx.session.client_capabilities
        return capabilities is not None and capabilities.elicitation is not None

    async def _elicit_meanwhile(self, ctx: ServerRequestContext[Any, Any], request: Request) -> None:
        """Handshake era: ask the client's user while the request also waits in the inbox."""
        assert self.options.decider is not None
        try:
            answer = await ctx.session.elicit_form(
                elicit.question_text(request),
                elicit.question_schema(request),
                related_request_id=ctx.request_id,
            )
        except MCPError as exc:
            log.warning("the client did not answer the in-band question: %s", exc.error.message)
            return
        await self.options.decider.record(request, answer)

    async def _ask_in_band(
        self,
        ctx: ServerRequestContext[Any, Any],
        session: McpSession,
        call: ToolCall,
        scope: Scope,
        params: types.CallToolRequestParams,
    ) -> types.InputRequiredResult | None:
        """2026-07-28 era: answer an input-required result asking the user, or record their answer
        (the retry carries it) and let the call go on; None: nothing to ask."""
        if not self._may_elicit(ctx) or ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return None
        assert self.options.decider is not None and call.id is not None
        planned = await self.gate.asubmit(call, scope)
        if not isinstance(planned, Pending):
            return None
        request = planned.request
        answer = (params.input_responses or {}).get(elicit.INPUT_KEY)
        if isinstance(answer, types.ElicitResult) and params.request_state == request.id:
            await self.options.decider.record(request, answer)
            return None
        session.park(call.id)
        return types.InputRequiredResult(
            input_requests={elicit.INPUT_KEY: elicit.elicit_request(request)}, request_state=request.id
        )

    async def _in_doubt(self, scope: Scope, call: ToolCall, exc: ExecutionError) -> dict[str, Any]:
        """The answer to a call whose run is in doubt or under way elsewhere: what to check."""
        try:
            request = await self._request(scope, call)
            execution = await anyio.to_thread.run_sync(lambda: self.gate.store.get_execution(request.id))
        except SignoffError:  # the store is away: the gate's own words say as much
            return text_result(str(exc), is_error=True)
        running = isinstance(exc, ExecutionInProgress)
        return in_doubt_result(request, execution, service=self.options.service, still_running=running)

    async def _request(self, scope: Scope, call: ToolCall) -> Request:
        found = await anyio.to_thread.run_sync(
            lambda: self.gate.store.find_request(scope.thread_id, call.id or "")
        )
        assert found is not None
        return found

    async def _cancel(self, scope: Scope, call: ToolCall, reason: str) -> None:
        try:
            request = await anyio.to_thread.run_sync(
                lambda: self.gate.store.find_request(scope.thread_id, call.id or "")
            )
            if request is not None and not request.is_terminal:
                await anyio.to_thread.run_sync(
                    lambda: self.gate.store.cancel(
                        request.id, actor=scope.agent or "agent", channel=CANCEL_CHANNEL, reason=reason
                    )
                )
        except SignoffError as exc:
            log.warning("could not cancel the request of a cancelled call: %s", exc)

    async def cancel_open(self, reason: str) -> None:
        """Cancel every open request of the proxy's sessions (the upstream is gone)."""
        for thread_id in self.sessions.thread_ids():
            try:
                cancel = partial(
                    self.gate.store.cancel_thread,
                    thread_id,
                    actor="signoff-mcp",
                    channel=CANCEL_CHANNEL,
                    reason=reason,
                )
                await anyio.to_thread.run_sync(cancel)
            except SignoffError as exc:
                log.warning("could not cancel the open requests of %s: %s", thread_id, exc)


def client_name(ctx: ServerRequestContext[Any, Any]) -> str | None:
    params = ctx.session.client_params
    if params is None or params.client_info is None:
        return None
    return params.client_info.name or None


def shown_client(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The client's name as the request records it: what it calls itself, its hidden characters
    written out, cut to `CLIENT_NAME_LIMIT` (it is shown to people, never used for rules)."""
    name = client_name(ctx)
    return None if name is None else visible(name)[:CLIENT_NAME_LIMIT]


def http_session_of(ctx: ServerRequestContext[Any, Any]) -> str | None:
    headers = getattr(ctx.request, "headers", None)
    if headers is None:
        return None
    value = headers.get("mcp-session-id")
    return str(value) if value else None


def progress_token(ctx: ServerRequestContext[Any, Any]) -> Any:
    return None if ctx.meta is None else ctx.meta.get("progress_token")


Forward = Callable[..., Awaitable[dict[str, Any]]]
