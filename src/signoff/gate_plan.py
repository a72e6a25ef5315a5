"""Planning one call at the gate: its outcome when nobody needs asking, else its request (found
again by (thread, tool_call_id), or made), decided at once for an unattended run.

A decided request keeps its decision whatever the rules say now: the request is looked up before
the rules are applied, so a person's reject stays a reject after the rule is switched off. A
request still pending whose rule no longer asks is not waited for (switching HITL off takes
effect at once). The fast path (`unasked`) answers a call the rules in force do not ask about with
no I/O at all; a call that may have been asked about before (a durable run resuming) skips it.
"""

from __future__ import annotations

from ._util import utcnow
from .asking import request_for_call
from .backend import Backend
from .calls import Scope, ToolCall
from .errors import ApprovalRequiredUnattended, AutoResumeExceeded, RequestConflict
from .gate_rules import GateRules
from .outcome import Outcome, not_required
from .policies import Policy
from .requests import NewRequest, Request
from .rules.explanation import Explanation
from .scopes import effective_scope
from .unattended import decide_unattended
from .waiting import PAST_DEADLINE, narrow_patience


class Planner:
    def __init__(
        self, store: Backend, rules: GateRules, policy: Policy, *, max_auto_resume: int | None
    ) -> None:
        self.store = store
        self.rules = rules
        self.policy = policy
        self._max_auto_resume = max_auto_resume

    def explain(self, call: ToolCall, scope: Scope) -> Explanation:
        return self.rules.resolver().explain(
            call.name, scope.agent, scope.app, call.args, scope.requester, call.annotations
        )

    def unasked(self, call: ToolCall, scope: Scope | None, default: Scope) -> Outcome | None:
        """The fast path: the outcome of a call with an id that the rules in force (no refresh
        due: no I/O) do not ask about, as `open` would plan it; None: plan it in full. Calls
        without an id take the full path, which numbers them in their scope."""
        resolver = self.rules.current()
        if resolver is None or not call.id:
            return None
        if call.name not in self.rules.answers and self.rules.asks_nowhere_under(resolver, call.name):
            return not_required(call.name, call.id, call.args)  # and `answers` has it for next time
        scope = effective_scope(scope, default)
        live = resolver.explain(
            call.name, scope.agent, scope.app, call.args, scope.requester, call.annotations
        )
        if live.ask:
            return None
        self._shadow_check(live, call, scope)
        return not_required(call.name, call.id, call.args)

    def open(self, call: ToolCall, scope: Scope) -> Outcome | Request:
        """Plan the call: an Outcome when nobody needs asking, else its (possibly decided) request."""
        assert call.id is not None
        explanation = self.explain(call, scope)
        narrow_patience(utcnow() + explanation.rule.deadline + PAST_DEADLINE)  # the deadline it would have
        existing = self.store.find_request(scope.thread_id, call.id)
        if existing is not None and (explanation.ask or existing.is_terminal):
            return same_call(existing, call)
        if not explanation.ask:
            self._shadow_check(explanation, call, scope)
            return not_required(call.name, call.id, call.args)
        if not explanation.rule.required and not self.policy.should_ask(call, scope, self.store):
            return not_required(call.name, call.id, call.args)
        self._shadow_check(explanation, call, scope)
        if scope.unattended:
            return self._auto_decide(call, scope, explanation)
        request, _ = self.store.create_request(self.new_request(call, scope, explanation))
        return same_call(request, call)

    def _shadow_check(self, live: Explanation, call: ToolCall, scope: Scope) -> None:
        self.rules.shadow_check(live, args=call.args, requester=scope.requester, annotations=call.annotations)

    def new_request(
        self, call: ToolCall, scope: Scope, explanation: Explanation, *, drafting: bool = False
    ) -> NewRequest:
        return request_for_call(
            call, scope, explanation.rule, self.rules.origin(explanation), drafting=drafting
        )

    # -- unattended ---------------------------------------------------------------------------

    def max_auto_resume(self) -> int:
        if self._max_auto_resume is not None:
            return self._max_auto_resume
        return self.rules.resolver().rules.defaults.auto_resume_limit()

    def _auto_decide(self, call: ToolCall, scope: Scope, explanation: Explanation) -> Request:
        """Nobody to ask (cron): decide by the `unattended` mode, for at most N rounds per run (a
        round: the calls of one model turn, `call.round`; a call without one is a round alone)."""
        rule = explanation.rule
        if rule.unattended == "fail":
            raise ApprovalRequiredUnattended(f"{call.name!r} needs approval and this run is unattended")
        limit = self.max_auto_resume()
        if self.store.count_auto_rounds(scope.thread_id, besides=call.round) >= limit:
            raise AutoResumeExceeded(limit)
        request, _ = self.store.create_request(self.new_request(call, scope, explanation))
        return decide_unattended(self.store, request, call.name)


def same_call(request: Request, call: ToolCall) -> Request:
    if request.tool_name != call.name:
        raise RequestConflict(
            f"tool_call_id {call.id!r} in thread {request.thread_id!r} already belongs to a call of "
            f"{request.tool_name!r}, not {call.name!r}"
        )
    return request
