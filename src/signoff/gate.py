"""The gate an agent calls before a tool runs (DESIGN §4–§7).

    gate = Gate(open_store(), rules=RuleSet.from_file("rules.yaml"))

    outcome = gate.review(call, scope)            # blocking: waits for a person
    outcome = await gate.areview(call, scope)     # a coroutine; no thread per waiter
    result = gate.submit(call, scope)             # suspending: an Outcome, or Pending right away
    reply = gate.run(call, send_email, scope)     # review, then run the tool exactly once

    @gate.guard(allowed_decisions=["approve", "reject"])
    def delete_records(table: str, ids: list[int]) -> str: ...

A decision reaches the waiter by push (see `signoff.store.wakeup`). A request's deadline is
enforced by the waiter itself: at the deadline it expires the request (compare-and-set, so only
one party does) and returns the rule's `on_expire` outcome. Over a `Client`, the gate's calls
ride out the server's transient trouble until the request's deadline (see `waiting.patience`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta
from functools import partial
from typing import Any, TypeVar

from ._util import parse_duration, utcnow
from .asking import request_for_question
from .calls import Scope, ToolCall
from .errors import RequestExpired
from .gate_plan import same_call
from .gate_setup import GateSetup
from .outcome import Outcome, Reply, not_required, outcome_for
from .pending import Pending, Suspended, or_suspend
from .policies import learn_from
from .renewals import renewing_for
from .requests import Request, RequestStatus
from .rules.effective import DEFAULT_DEADLINE
from .running import arun_once, run_once, waiting_to_run
from .scopes import scope_state
from .waiting import (
    give_up_at,
    patience,
    patience_until,
    present,
    wait_async,
    wait_blocking,
)

__all__ = ["Gate", "Pending", "Suspended"]

F = TypeVar("F", bound=Callable[..., Any])


class Gate(GateSetup):
    """Decides whether a call needs a person, asks, waits, and runs tools exactly once.

    `rules`: a `RuleSet`, a YAML file path, or None to follow the rules kept in the store
    (re-read within `rules_refresh` seconds of a change, so switching HITL off takes effect
    at once). `policy` narrows further (`AskOnce`...). `ui` presents requests in this process
    (a console); without one, decisions come from elsewhere (CLI, server, chat).

    Waiters are woken by push and otherwise sleep until their deadline; `poll_interval` makes
    each also look again that often (costly with many waiters: the store's own source of
    wake-ups has a per-process safety net already).
    """

    # -- review -------------------------------------------------------------------------------

    def review(
        self,
        call: ToolCall,
        scope: Scope | None = None,
        *,
        timeout: float | None = None,
        resumed: bool = False,
    ) -> Outcome:
        """Ask if the rules say so, and wait (blocking) for the decision or the deadline.

        Raises ReviewTimeout if `timeout` seconds pass first; the request stays pending and a
        replay of the same call picks it up. `resumed=True`: the call may have been asked about
        before (a durable run resuming): its request is looked up even if the rules in force
        would not ask, so a decision made keeps whatever the rules say now (no fast path).
        """
        if not resumed and call.id and self.nowhere.get(call.name):  # kept: no call of it is asked about
            return not_required(call.name, call.id, call.args)
        if not resumed and (unasked := self._planner.unasked(call, scope, self.default_scope)) is not None:
            return unasked
        state = scope_state(scope, self.default_scope)
        call = state.with_call_id(call)
        give_up = give_up_at(timeout)
        # until the default deadline; narrowed once the rule is known
        with patience(patience_until(utcnow() + DEFAULT_DEADLINE, give_up)):
            planned = self._planner.open(call, state.scope)
        if isinstance(planned, Outcome):
            return planned
        return self._decided(planned, call, state.scope, give_up=give_up, timeout=timeout)

    async def areview(
        self,
        call: ToolCall,
        scope: Scope | None = None,
        *,
        timeout: float | None = None,
        resumed: bool = False,
    ) -> Outcome:
        """`review` as a coroutine: waiting holds no thread."""
        if not resumed and call.id and self.nowhere.get(call.name):  # kept: no call of it is asked about
            return not_required(call.name, call.id, call.args)
        if not resumed and (unasked := self._planner.unasked(call, scope, self.default_scope)) is not None:
            return unasked
        state = scope_state(scope, self.default_scope)
        call = state.with_call_id(call)
        give_up = give_up_at(timeout)
        # until the default deadline; narrowed once the rule is known
        with patience(patience_until(utcnow() + DEFAULT_DEADLINE, give_up)):
            planned = await asyncio.to_thread(self._planner.open, call, state.scope)
        if isinstance(planned, Outcome):
            return planned
        request = planned
        with patience(patience_until(request.deadline, give_up)):
            if not request.is_terminal and self.ui is not None:
                request = await asyncio.to_thread(present, self.store, self.ui, request, actor=self.actor)
            if not request.is_terminal:
                request = await wait_async(
                    self.store, request, timeout=timeout, poll_interval=self.poll_interval
                )
            return await asyncio.to_thread(self._finish, request, call, state.scope)

    def submit(
        self, call: ToolCall, scope: Scope | None = None, *, resumed: bool = False
    ) -> Outcome | Pending:
        """The suspending mode: the outcome if there is one already, else `Pending` at once
        (`resumed`: as for `review`)."""
        if not resumed and call.id and self.nowhere.get(call.name):  # kept: no call of it is asked about
            return not_required(call.name, call.id, call.args)
        if not resumed and (unasked := self._planner.unasked(call, scope, self.default_scope)) is not None:
            return unasked
        state = scope_state(scope, self.default_scope)
        call = state.with_call_id(call)
        with patience(patience_until(utcnow() + DEFAULT_DEADLINE, None)):  # narrowed once the rule is known
            planned = self._planner.open(call, state.scope)
        if isinstance(planned, Outcome):
            return planned
        request = planned
        with patience(patience_until(request.deadline, None)):
            if not request.is_terminal and request.deadline <= utcnow():
                request = self.store.expire(request.id) or self.store.get_request(request.id)
            if not request.is_terminal:
                return Pending(request)
            return self._finish(request, call, state.scope)

    def draft(self, call: ToolCall, scope: Scope | None = None) -> Request | None:
        """Open the request while the model is still streaming the args (CopilotKit's inProgress):
        people see the partial args but cannot decide until `store.update_draft(id, args=...,
        ready=True)`. Returns None when the rules would not ask. `review` the same call (same id)
        afterwards to wait for the decision."""
        state = scope_state(scope, self.default_scope)
        call = state.with_call_id(call)
        explanation = self._planner.explain(call, state.scope)
        if not explanation.ask:
            return None
        new = self._planner.new_request(call, state.scope, explanation, drafting=True)
        with patience(patience_until(new.deadline, None)):
            request, _ = self.store.create_request(new)
        return same_call(request, call)

    async def asubmit(
        self, call: ToolCall, scope: Scope | None = None, *, resumed: bool = False
    ) -> Outcome | Pending:
        return await asyncio.to_thread(partial(self.submit, call, scope, resumed=resumed))

    def _decided(
        self, request: Request, call: ToolCall, scope: Scope, *, give_up: float | None, timeout: float | None
    ) -> Outcome:
        """Present the request here (with a `ui`) and wait (blocking) for its decision."""
        with patience(patience_until(request.deadline, give_up)):
            if not request.is_terminal and self.ui is not None:
                request = present(self.store, self.ui, request, actor=self.actor)
            if not request.is_terminal:
                request = wait_blocking(
                    self.store, request, timeout=timeout, poll_interval=self.poll_interval
                )
            return self._finish(request, call, scope)

    def _finish(self, request: Request, call: ToolCall, scope: Scope) -> Outcome:
        if request.status is RequestStatus.EXPIRED and request.rule.on_expire == "fail":
            raise RequestExpired(f"request {request.id} expired before anyone decided")
        outcome = outcome_for(request)
        learn_from(self.policy, call, scope, outcome, self.store)
        return outcome

    # -- unattended ---------------------------------------------------------------------------

    def max_auto_resume(self) -> int:
        """How many rounds an unattended run may auto-resume (see `signoff.gate_plan`)."""
        return self._planner.max_auto_resume()

    # -- input requests -----------------------------------------------------------------------

    def ask(
        self,
        question: str,
        *,
        schema: dict[str, Any] | None = None,
        scope: Scope | None = None,
        id: str | None = None,
        approvers: tuple[str, ...] = (),
        deadline: str | float | timedelta = timedelta(hours=24),
        timeout: float | None = None,
    ) -> Outcome:
        """Ask a person a question; the answer (`outcome.tool_result`) is validated against `schema`."""
        state = scope_state(scope, self.default_scope)
        call = state.with_call_id(ToolCall(name="signoff.ask", args={"question": question}, id=id))
        assert call.id is not None
        give_up = give_up_at(timeout)
        with patience(patience_until(utcnow() + parse_duration(deadline), give_up)):
            request = self.store.find_request(state.scope.thread_id, call.id)
        if request is None:
            new = request_for_question(
                call,
                state.scope,
                question,
                schema=schema,
                approvers=approvers,
                deadline=parse_duration(deadline),
            )
            with patience(patience_until(new.deadline, give_up)):
                request, _ = self.store.create_request(new)
        return self._decided(request, call, state.scope, give_up=give_up, timeout=timeout)

    def cancel(self, thread_id: str, *, reason: str | None = None) -> int:
        """Cancel a run's open requests (the agent aborted it); returns how many."""
        return self.store.cancel_thread(thread_id, actor="agent", channel="gate", reason=reason)

    # -- running tools exactly once -----------------------------------------------------------

    def run(
        self,
        call: ToolCall,
        fn: Callable[..., Any],
        scope: Scope | None = None,
        *,
        idempotent: bool = False,
        timeout: float | None = None,
        suspend: bool = False,
        resumed: bool = False,
    ) -> Reply:
        """Review the call, then run `fn(**final_args)` at most once per request.

        Asking again after a success returns the stored result without calling `fn`. With
        `suspend=True`, a call still waiting raises `Suspended` instead of blocking. `resumed`:
        as for `review` (a decided call runs as decided, even if its rule was switched off).
        """
        state = scope_state(scope, self.default_scope)
        call = state.with_call_id(call)
        if suspend:
            outcome = or_suspend(self.submit(call, state.scope, resumed=resumed))
            return run_once(self.store, outcome, fn, idempotent=idempotent, lease=self.lease)
        with renewing_for(self.store):
            with waiting_to_run():
                outcome = self.review(call, state.scope, timeout=timeout, resumed=resumed)
            return run_once(self.store, outcome, fn, idempotent=idempotent, lease=self.lease)

    async def arun(
        self,
        call: ToolCall,
        fn: Callable[..., Awaitable[Any]] | Callable[..., Any],
        scope: Scope | None = None,
        *,
        idempotent: bool = False,
        timeout: float | None = None,
        suspend: bool = False,
        resumed: bool = False,
    ) -> Reply:
        """`run` for coroutines (sync `fn` works too)."""
        state = scope_state(scope, self.default_scope)
        call = state.with_call_id(call)
        if suspend:
            outcome = or_suspend(await self.asubmit(call, state.scope, resumed=resumed))
            return await arun_once(self.store, outcome, fn, idempotent=idempotent, lease=self.lease)
        with renewing_for(self.store):
            with waiting_to_run():
                outcome = await self.areview(call, state.scope, timeout=timeout, resumed=resumed)
            return await arun_once(self.store, outcome, fn, idempotent=idempotent, lease=self.lease)

    # -- the decorator ------------------------------------------------------------------------

    def guard(
        self,
        fn: F | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        schema: dict[str, Any] | None = None,
        requires_approval: bool = True,
        allowed_decisions: list[str] | None = None,
        approval_description: str | None = None,
        idempotent: bool = False,
        suspend: bool = False,
        timeout: float | None = None,
    ) -> Any:
        """Gate a function: calling it reviews the call and runs it at most once; returns a `Reply`."""
        from .guard import make_guard

        def decorate(func: F) -> Any:
            return make_guard(
                self,
                func,
                name=name,
                description=description,
                schema=schema,
                requires_approval=requires_approval,
                allowed_decisions=allowed_decisions,
                approval_description=approval_description,
                idempotent=idempotent,
                suspend=suspend,
                timeout=timeout,
            )

        return decorate(fn) if fn is not None else decorate
