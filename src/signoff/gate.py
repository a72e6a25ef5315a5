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
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ._util import os_user, parse_duration, utcnow
from .backend import Backend
from .calls import Scope, ToolCall
from .decisions import Approve, Decision, Reject
from .errors import (
    AlreadyDecided,
    ApprovalRequiredUnattended,
    AutoResumeExceeded,
    RequestConflict,
    RequestExpired,
    ServerUnavailable,
    SignoffError,
    StoreUnavailable,
)
from .execution import DEFAULT_LEASE
from .outcome import Outcome, Reply, not_required, outcome_for
from .policies import AlwaysAsk, Policy
from .requests import NewRequest, Request, RequestStatus
from .rules.model import (
    DEFAULT_DEADLINE,
    RequestRule,
    RuleOrigin,
    RuleSet,
    ToolEntry,
)
from .rules.resolve import Explanation, Resolver
from .running import arun_once, jsonable, run_once
from .scopes import ScopeState, current_scope
from .store import open_store
from .templates import render_description
from .validation import check_schema
from .waiting import narrow_patience, patience, present, wait_async, wait_blocking

if TYPE_CHECKING:
    from .console import ConfirmationUI

UNATTENDED_ACTOR = "unattended"
PAST_DEADLINE = timedelta(seconds=30)
"""How long after a request's deadline the gate's calls still ride out server trouble, so that
the expiry itself can be recorded."""
F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Pending:
    """A request waiting for a person. Replaying the same call later finds its decision."""

    request: Request

    @property
    def request_id(self) -> str:
        return self.request.id

    @property
    def thread_id(self) -> str:
        return self.request.thread_id

    @property
    def tool_call_id(self) -> str:
        return self.request.tool_call_id


class Suspended(Exception):
    """The call waits for a person: end the run, keep its state, replay it later.

    Not a `SignoffError`: nothing went wrong.
    """

    def __init__(self, pending: Pending) -> None:
        self.pending = pending
        super().__init__(f"waiting for a decision on request {pending.request_id}")


class Gate:
    """Decides whether a call needs a person, asks, waits, and runs tools exactly once.

    `rules`: a `RuleSet`, a YAML file path, or None to follow the rules kept in the store
    (re-read within `rules_refresh` seconds of a change, so switching HITL off takes effect
    at once). `policy` narrows further (`AskOnce`...). `ui` presents requests in this process
    (a console); without one, decisions come from elsewhere (CLI, server, chat).

    Waiters are woken by push and otherwise sleep until their deadline; `poll_interval` makes
    each also look again that often (costly with many waiters: the store's own source of
    wake-ups has a per-process safety net already).
    """

    def __init__(
        self,
        store: Backend | None = None,
        *,
        rules: RuleSet | str | Path | None = None,
        policy: Policy | None = None,
        ui: ConfirmationUI | None = None,
        scope: Scope | None = None,
        actor: str | None = None,
        lease: timedelta = DEFAULT_LEASE,
        max_auto_resume: int | None = None,
        poll_interval: float | None = None,
        rules_refresh: float = 1.0,
    ) -> None:
        self.store: Backend = store if store is not None else open_store()
        self.policy: Policy = policy if policy is not None else AlwaysAsk()
        self.ui = ui
        self.default_scope = scope or Scope()
        self.actor = actor or os_user()
        self.lease = lease
        self.poll_interval = poll_interval
        self.rules_refresh = rules_refresh
        self._max_auto_resume = max_auto_resume
        self._fixed_rules = RuleSet.from_file(rules) if isinstance(rules, str | Path) else rules
        self._rules_path = str(rules) if isinstance(rules, str | Path) else None
        self._code_tools: dict[str, ToolEntry] = {}
        self._code_keys: frozenset[str] = frozenset()
        """The code-declared tools the current rules do not override (their origin is `code`)."""
        self._resolver_now: Resolver | None = None
        self._rules_version = -1
        self._next_refresh = 0.0
        self._resolver_lock = threading.Lock()

    # -- rules --------------------------------------------------------------------------------

    def register_tool(self, name: str, entry: ToolEntry) -> None:
        """Declare a tool's own default (the tool layer) in code; the rules' tool entry wins."""
        with self._resolver_lock:
            self._code_tools[name] = entry
            self._resolver_now = None
            self._next_refresh = 0.0

    def rules(self) -> RuleSet:
        return self.resolver().rules

    def resolver(self) -> Resolver:
        resolver = self._resolver_now
        if resolver is not None and (self._fixed_rules is not None or time.monotonic() < self._next_refresh):
            return resolver
        with self._resolver_lock:
            if self._fixed_rules is not None:
                if self._resolver_now is None:
                    self._resolver_now = Resolver(self._with_code_tools(self._fixed_rules))
                return self._resolver_now
            self._next_refresh = time.monotonic() + self.rules_refresh
            if self._resolver_now is None:
                version = self.store.rules_version()
            else:
                try:  # one attempt: while the server is away, the rules read last stand
                    with patience(utcnow()):
                        version = self.store.rules_version()
                except (ServerUnavailable, StoreUnavailable):
                    return self._resolver_now
            if self._resolver_now is None or version != self._rules_version:
                self._resolver_now = Resolver(self._with_code_tools(self.store.load_rules()))
                self._rules_version = version
            return self._resolver_now

    def _with_code_tools(self, rules: RuleSet) -> RuleSet:
        self._code_keys = frozenset(name for name in self._code_tools if name not in rules.tools)
        if not self._code_tools:
            return rules
        return rules.model_copy(update={"tools": {**self._code_tools, **rules.tools}})

    def _origin(self, explanation: Explanation) -> RuleOrigin:
        """Where the rule a call is asked under came from (shown with the request)."""
        key = explanation.deciding_key
        if explanation.layer == "tool" and key in self._code_keys:
            return RuleOrigin(source="code", layer="tool", key=key)
        if self._fixed_rules is None:
            return RuleOrigin(source="store", layer=explanation.layer, key=key)
        if self._rules_path is not None:
            return RuleOrigin(source="file", layer=explanation.layer, key=key, path=self._rules_path)
        return RuleOrigin(source="code", layer=explanation.layer, key=key)

    def explain(
        self,
        tool: str,
        *,
        agent: str | None = None,
        app: str | None = None,
        args: dict[str, Any] | None = None,
        requester: str | None = None,
    ) -> Explanation:
        """Would this call ask, with which decisions, and which layer said so."""
        return self.resolver().explain(tool, agent, app, args, requester)

    # -- scope --------------------------------------------------------------------------------

    @contextmanager
    def scope(self, scope: Scope | None = None, **fields: Any) -> Iterator[Scope]:
        """Run guarded calls inside `scope` (or a Scope built from `fields`)."""
        chosen = scope if scope is not None else Scope(**fields)
        token = current_scope.set(ScopeState(chosen))
        try:
            yield chosen
        finally:
            current_scope.reset(token)

    def _scope_state(self, scope: Scope | None) -> ScopeState:
        state = current_scope.get()
        if scope is not None and (state is None or state.scope != scope):
            return ScopeState(scope)
        if state is None:
            return ScopeState(self.default_scope)
        return state

    # -- review -------------------------------------------------------------------------------

    def review(self, call: ToolCall, scope: Scope | None = None, *, timeout: float | None = None) -> Outcome:
        """Ask if the rules say so, and wait (blocking) for the decision or the deadline.

        Raises ReviewTimeout if `timeout` seconds pass first; the request stays pending and a
        replay of the same call picks it up.
        """
        state = self._scope_state(scope)
        call = self._with_id(call, state)
        give_up = _give_up(timeout)
        with patience(
            _patience_until(utcnow() + DEFAULT_DEADLINE, give_up)
        ):  # narrowed once the rule is known
            planned = self._open(call, state.scope)
        if isinstance(planned, Outcome):
            return planned
        request = planned
        with patience(_patience_until(request.deadline, give_up)):
            if not request.is_terminal and self.ui is not None:
                request = present(self.store, self.ui, request, actor=self.actor)
            if not request.is_terminal:
                request = wait_blocking(
                    self.store, request, timeout=timeout, poll_interval=self.poll_interval
                )
            return self._finish(request, call, state.scope)

    async def areview(
        self, call: ToolCall, scope: Scope | None = None, *, timeout: float | None = None
    ) -> Outcome:
        """`review` as a coroutine: waiting holds no thread."""
        state = self._scope_state(scope)
        call = self._with_id(call, state)
        give_up = _give_up(timeout)
        with patience(
            _patience_until(utcnow() + DEFAULT_DEADLINE, give_up)
        ):  # narrowed once the rule is known
            planned = await asyncio.to_thread(self._open, call, state.scope)
        if isinstance(planned, Outcome):
            return planned
        request = planned
        with patience(_patience_until(request.deadline, give_up)):
            if not request.is_terminal and self.ui is not None:
                request = await asyncio.to_thread(present, self.store, self.ui, request, actor=self.actor)
            if not request.is_terminal:
                request = await wait_async(
                    self.store, request, timeout=timeout, poll_interval=self.poll_interval
                )
            return await asyncio.to_thread(self._finish, request, call, state.scope)

    def submit(self, call: ToolCall, scope: Scope | None = None) -> Outcome | Pending:
        """The suspending mode: the outcome if there is one already, else `Pending` at once."""
        state = self._scope_state(scope)
        call = self._with_id(call, state)
        with patience(_patience_until(utcnow() + DEFAULT_DEADLINE, None)):  # narrowed once the rule is known
            planned = self._open(call, state.scope)
        if isinstance(planned, Outcome):
            return planned
        request = planned
        with patience(_patience_until(request.deadline, None)):
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
        state = self._scope_state(scope)
        call = self._with_id(call, state)
        explanation = self.explain(
            call.name,
            agent=state.scope.agent,
            app=state.scope.app,
            args=call.args,
            requester=state.scope.requester,
        )
        if not explanation.ask:
            return None
        new = self._new_request(call, state.scope, explanation, drafting=True)
        with patience(_patience_until(new.deadline, None)):
            request, _ = self.store.create_request(new)
        return self._same_call(request, call)

    async def asubmit(self, call: ToolCall, scope: Scope | None = None) -> Outcome | Pending:
        return await asyncio.to_thread(self.submit, call, scope)

    def _with_id(self, call: ToolCall, state: ScopeState) -> ToolCall:
        if call.id:
            return call
        return replace(call, id=state.next_call_id(call))

    def _open(self, call: ToolCall, scope: Scope) -> Outcome | Request:
        """Plan the call: an Outcome when nobody needs asking, else its (possibly decided) request."""
        assert call.id is not None
        explanation = self.explain(
            call.name, agent=scope.agent, app=scope.app, args=call.args, requester=scope.requester
        )
        narrow_patience(utcnow() + explanation.rule.deadline + PAST_DEADLINE)  # the deadline it would have
        if not explanation.ask:
            return not_required(call.name, call.id, call.args)
        existing = self.store.find_request(scope.thread_id, call.id)
        if existing is not None:
            return self._same_call(existing, call)
        if not explanation.rule.required and not self.policy.should_ask(call, scope, self.store):
            return not_required(call.name, call.id, call.args)
        if scope.unattended:
            return self._auto_decide(call, scope, explanation)
        request, _ = self.store.create_request(self._new_request(call, scope, explanation))
        return self._same_call(request, call)

    def _new_request(
        self, call: ToolCall, scope: Scope, explanation: Explanation, *, drafting: bool = False
    ) -> NewRequest:
        assert call.id is not None
        rule = explanation.rule
        if call.schema is not None:
            check_schema(call.schema)
        return NewRequest(
            thread_id=scope.thread_id,
            tool_call_id=call.id,
            tool_name=call.name,
            args=jsonable(call.args),
            description=render_description(
                rule.description,
                tool_name=call.name,
                args=call.args,
                redact=rule.redact,
                prefix=rule.description_prefix,
            ),
            deadline=utcnow() + rule.deadline,
            rule=rule.for_request(self._origin(explanation)),
            tool_description=call.description,
            args_schema=call.schema,
            agent=scope.agent,
            app=scope.app,
            requester=scope.requester,
            drafting=drafting,
        )

    @staticmethod
    def _same_call(request: Request, call: ToolCall) -> Request:
        if request.tool_name != call.name:
            raise RequestConflict(
                f"tool_call_id {call.id!r} in thread {request.thread_id!r} already belongs to a call of "
                f"{request.tool_name!r}, not {call.name!r}"
            )
        return request

    def _finish(self, request: Request, call: ToolCall, scope: Scope) -> Outcome:
        if request.status is RequestStatus.EXPIRED and request.rule.on_expire == "fail":
            raise RequestExpired(f"request {request.id} expired before anyone decided")
        outcome = outcome_for(request)
        self.policy.after_decision(call, scope, outcome, self.store)
        return outcome

    # -- unattended ---------------------------------------------------------------------------

    def max_auto_resume(self) -> int:
        if self._max_auto_resume is not None:
            return self._max_auto_resume
        return self.rules().defaults.auto_resume_limit()

    def _auto_decide(self, call: ToolCall, scope: Scope, explanation: Explanation) -> Request:
        """Nobody to ask (cron): decide by the `unattended` mode, at most N times per run.

        The mode is the stored request's: through a server, the server's rule where it covers
        the tool, which may be stricter than this gate's. A request nobody may decide on its own
        is cancelled (a replay then finds it cancelled instead of waiting for nobody)."""
        rule = explanation.rule
        if rule.unattended == "fail":
            raise ApprovalRequiredUnattended(f"{call.name!r} needs approval and this run is unattended")
        limit = self.max_auto_resume()
        if self.store.count_auto_decisions(scope.thread_id) >= limit:
            raise AutoResumeExceeded(limit)
        request, _ = self.store.create_request(self._new_request(call, scope, explanation))
        if request.is_terminal:
            return request
        mode = request.rule.unattended
        if mode == "fail":
            self._give_up(request, "the rule says unattended runs fail")
            raise ApprovalRequiredUnattended(f"{call.name!r} needs approval and this run is unattended")
        decision: Decision = (
            Approve(comment="auto-approved: unattended")
            if mode == "approve"
            else Reject(message="auto-rejected: unattended")
        )
        try:
            return self.store.decide(
                request.id, decision, actor=UNATTENDED_ACTOR, channel="unattended", on_behalf=True
            )
        except AlreadyDecided:
            return self.store.get_request(request.id)
        except SignoffError as exc:  # the server refused it (its cap, its rule)
            self._give_up(request, exc.message)
            raise

    def _give_up(self, request: Request, why: str) -> None:
        with suppress(AlreadyDecided):
            self.store.cancel(
                request.id, actor=UNATTENDED_ACTOR, channel="unattended", reason=f"unattended run: {why}"
            )

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
        state = self._scope_state(scope)
        call = self._with_id(ToolCall(name="signoff.ask", args={"question": question}, id=id), state)
        assert call.id is not None
        give_up = _give_up(timeout)
        with patience(_patience_until(utcnow() + parse_duration(deadline), give_up)):
            request = self.store.find_request(state.scope.thread_id, call.id)
        if request is None:
            if schema is not None:
                check_schema(schema)
            new = NewRequest(
                thread_id=state.scope.thread_id,
                tool_call_id=call.id,
                tool_name=call.name,
                args=call.args,
                kind="input",
                description=question,
                deadline=utcnow() + parse_duration(deadline),
                rule=RequestRule(
                    allowed_decisions=("respond", "reject"),
                    approvers=tuple(approvers),
                    origin=RuleOrigin(source="code", layer="ask"),
                ),
                answer_schema=schema,
                agent=state.scope.agent,
                app=state.scope.app,
                requester=state.scope.requester,
            )
            with patience(_patience_until(new.deadline, give_up)):
                request, _ = self.store.create_request(new)
        with patience(_patience_until(request.deadline, give_up)):
            if not request.is_terminal and self.ui is not None:
                request = present(self.store, self.ui, request, actor=self.actor)
            if not request.is_terminal:
                request = wait_blocking(
                    self.store, request, timeout=timeout, poll_interval=self.poll_interval
                )
            return self._finish(request, call, state.scope)

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
    ) -> Reply:
        """Review the call, then run `fn(**final_args)` at most once per request.

        Asking again after a success returns the stored result without calling `fn`. With
        `suspend=True`, a call still waiting raises `Suspended` instead of blocking.
        """
        state = self._scope_state(scope)
        call = self._with_id(call, state)
        if suspend:
            outcome = _or_suspend(self.submit(call, state.scope))
        else:
            outcome = self.review(call, state.scope, timeout=timeout)
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
    ) -> Reply:
        """`run` for coroutines (sync `fn` works too)."""
        state = self._scope_state(scope)
        call = self._with_id(call, state)
        if suspend:
            outcome = _or_suspend(await self.asubmit(call, state.scope))
        else:
            outcome = await self.areview(call, state.scope, timeout=timeout)
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


def _give_up(timeout: float | None) -> float | None:
    return None if timeout is None else time.monotonic() + timeout


def _patience_until(deadline: datetime, give_up: float | None) -> datetime:
    """Until when the gate's calls ride out server trouble: a little past the request's deadline
    (its expiry must be recorded too), and never past the caller's timeout."""
    until = deadline + PAST_DEADLINE
    if give_up is not None:
        until = min(until, utcnow() + timedelta(seconds=max(give_up - time.monotonic(), 0.0)))
    return until


def _or_suspend(found: Outcome | Pending) -> Outcome:
    if isinstance(found, Pending):
        raise Suspended(found)
    return found
