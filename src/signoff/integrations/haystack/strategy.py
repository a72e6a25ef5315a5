"""`SignoffConfirmationStrategy`: a Haystack `ConfirmationStrategy` whose rules are signoff's.

    hook = SignoffConfirmationHook({"*": SignoffConfirmationStrategy()})
    agent = Agent(chat_generator=..., tools=[...], hooks={"before_tool": [hook]})
    agent.run(messages, hook_context={"signoff": {"thread_id": "ticket-42", "requester": "alice"}})

Whether a call asks is signoff's to say (the rules in the store or a file, CEL `when`, the agent
and app layers, policies), not a Haystack policy's: under `"*"` a tool the rules do not gate runs
at once; a tool the map names (`{"send_email": SignoffConfirmationStrategy()}`, or in a tuple
key) asks unless a rule in force explicitly turns it off (see `.named`). A gated call becomes a
request keyed by (thread_id, the model's tool_call_id) and `run` waits for the decision (push,
not polling) until the rule's deadline, then takes the rule's `on_expire` outcome; `run_async`
waits as a coroutine, holding no thread. The decision comes back as Haystack's own
`ToolExecutionDecision`, with the texts `BlockingConfirmationStrategy` writes.

Under `SignoffConfirmationHook`, a run that waits is kept in signoff's store first (the history a
`SignoffPauseHook` pause would give), and the decided calls run through signoff's execution
record: a process that dies while waiting is continued by `resume(agent, None, hook_context=...)`
in another, and nothing runs twice (see `.turn`).

Use `SignoffConfirmationHook` (Haystack's `ConfirmationHook`, naming the model turn) rather than the
stock hook: with it a turn's calls are one round of an unattended run's auto-resume cap; under the
stock hook, which never shows a strategy the turn, each call counts as a round.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from haystack.core.serialization import default_from_dict, default_to_dict
from haystack.hooks.human_in_the_loop import ToolExecutionDecision

from signoff import Gate, Outcome, Pending, RuleSet, Scope, ToolCall, ToolEntry

from .._gate import RulesGiven, adapter_gate
from .context import ScopeDefaults, rule_fields_from_context, scope_from_context
from .decisions import execution_decision
from .named import reached_by_name
from .resuming import resumed, resumed_ids, resumes
from .rounds import asking_round
from .turn import confirming_turn


def rules_to_dict(rules: RulesGiven) -> Any:
    if isinstance(rules, RuleSet):
        return rules.model_dump(mode="json", exclude_defaults=True)
    if isinstance(rules, Path):
        return str(rules)
    return rules


class SignoffConfirmationStrategy:
    """Asks through signoff's gate; see the module.

    `gate`: a `signoff.Gate` (its store, rules, policy); without one, `Gate(open_backend())`
    with `rules` (a file path, a `RuleSet` or its dict; None: the rules kept in the store).
    `thread_id`, `agent`, `app`, `requester`, `unattended`: the scope's defaults, overridden per
    run by `hook_context["signoff"]` (see `signoff.integrations.haystack.context`). `timeout`:
    seconds `run` waits at most before raising `signoff.ReviewTimeout` (the request stays
    pending); None waits until the rule's deadline.

    `to_dict` records the constructor's arguments but not a given gate: `from_dict` builds
    `Gate(open_backend(), rules=...)` again. The strategy is a component of the gate: the tools
    it is named for are its declarations alone (`Gate.component`).
    """

    def __init__(
        self,
        gate: Gate | None = None,
        *,
        rules: RulesGiven = None,
        thread_id: str | None = None,
        agent: str | None = None,
        app: str | None = None,
        requester: str | None = None,
        unattended: bool = False,
        timeout: float | None = None,
    ) -> None:
        self._placed: set[str] = set()
        """Tools whose naming is known: named in a map (declared gated) or reached by `"*"`."""
        self.gate = adapter_gate(gate, rules).component()
        self.rules = rules
        self.defaults = ScopeDefaults(
            thread_id=thread_id, agent=agent, app=app, requester=requester, unattended=unattended
        )
        self.timeout = timeout

    @property
    def gate(self) -> Gate:
        return self._gate

    @gate.setter
    def gate(self, gate: Gate) -> None:
        self._gate = gate
        self._nowhere = gate.nowhere  # held here: `run`'s first check, per call

    def name_tools(self, names: Iterable[str]) -> None:
        """The tools a strategies map names for this strategy: each asks unless a rule in force
        explicitly turns it off (signoff's hooks call this when they are built)."""
        for name in names:
            if self.gate.declaration(name) is None:
                self.gate.register_tool(name, ToolEntry(requires_approval=True))
            self._placed.add(name)

    def _place(self, tool_name: str, caller: Any) -> None:
        """First sight of `tool_name` under a hook that did not say: look for its map."""
        if reached_by_name(tool_name, caller, self):
            self.name_tools((tool_name,))
        self._placed.add(tool_name)

    # -- the ConfirmationStrategy protocol ---------------------------------------------------

    def run(
        self,
        *,
        tool_name: str,
        tool_description: str,
        tool_params: dict[str, Any],
        tool_call_id: str | None = None,
        confirmation_strategy_context: dict[str, Any] | None = None,
    ) -> ToolExecutionDecision:
        if tool_name not in self._placed:
            self._place(tool_name, sys._getframe(1))
        if (
            tool_call_id
            and self._nowhere[tool_name]
            and (not resumes.open or tool_call_id not in resumed_ids())
        ):
            # nobody is asked about this tool (`unasked` without reading the context); the
            # fields by position (tool_name, execute, tool_call_id, feedback, final_tool_params):
            # the same decision, without matching keywords on every call
            return ToolExecutionDecision(tool_name, True, tool_call_id, None, tool_params)
        again = resumed(tool_call_id)
        if not again and (
            unasked := self.unasked(tool_name, tool_params, tool_call_id, confirmation_strategy_context)
        ):
            return unasked
        call, scope = self.plan(
            tool_name,
            tool_description,
            tool_params,
            tool_call_id,
            confirmation_strategy_context,
            round=asking_round.get(),
        )
        return self.decision(self.outcome(call, scope, confirmation_strategy_context, resumed=again))

    async def run_async(
        self,
        *,
        tool_name: str,
        tool_description: str,
        tool_params: dict[str, Any],
        tool_call_id: str | None = None,
        confirmation_strategy_context: dict[str, Any] | None = None,
    ) -> ToolExecutionDecision:
        if tool_name not in self._placed:
            self._place(tool_name, sys._getframe(1))
        if (
            tool_call_id
            and self._nowhere[tool_name]
            and (not resumes.open or tool_call_id not in resumed_ids())
        ):
            return ToolExecutionDecision(tool_name, True, tool_call_id, None, tool_params)
        again = resumed(tool_call_id)
        if not again and (
            unasked := self.unasked(tool_name, tool_params, tool_call_id, confirmation_strategy_context)
        ):
            return unasked
        call, scope = self.plan(
            tool_name,
            tool_description,
            tool_params,
            tool_call_id,
            confirmation_strategy_context,
            round=asking_round.get(),
        )
        outcome = await self.aoutcome(call, scope, confirmation_strategy_context, resumed=again)
        if outcome.decision == "edit":  # the note reads the request again
            return await asyncio.to_thread(self.decision, outcome)
        return self.decision(outcome)

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self,
            rules=rules_to_dict(self.rules),
            **self.defaults.to_dict(),
            timeout=self.timeout,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SignoffConfirmationStrategy:
        return default_from_dict(cls, data)

    # -- shared with the durable pause -------------------------------------------------------

    def unasked(
        self,
        tool_name: str,
        tool_params: dict[str, Any],
        tool_call_id: str | None,
        context: dict[str, Any] | None,
    ) -> ToolExecutionDecision | None:
        """The fast path: the decision for a call with an id that the rules do not ask about
        (what `gate.review` would answer), made without a Scope or a ToolCall; None: plan it.
        `run` answers a tool the rules ask about nowhere before this, without reading `context`
        (nor does Haystack's own strategy read it): a malformed one is refused only for a tool
        that may ask."""
        if not tool_call_id:
            return None  # the gate numbers calls without an id in their scope
        agent, app, requester = rule_fields_from_context(context, self.defaults)
        if self.gate.may_ask(tool_name, agent, app) and (
            self.gate.explain(tool_name, agent=agent, app=app, args=tool_params, requester=requester).ask
        ):
            return None
        # As Haystack's own strategy answers a call its policy does not ask about.
        return ToolExecutionDecision(
            tool_name=tool_name, execute=True, tool_call_id=tool_call_id, final_tool_params=tool_params
        )

    def plan(
        self,
        tool_name: str,
        tool_description: str,
        tool_params: dict[str, Any],
        tool_call_id: str | None,
        context: dict[str, Any] | None,
        *,
        thread_required: bool = False,
        round: str | None = None,
    ) -> tuple[ToolCall, Scope]:
        """The signoff call and scope; `round` names the model turn (None: the call is a round of
        its own, as under Haystack's stock hook, which does not say which turn a call is of)."""
        call = ToolCall(
            name=tool_name,
            args=dict(tool_params),
            id=tool_call_id,
            description=tool_description or None,
            round=round,
        )
        return call, scope_from_context(context, self.defaults, thread_required=thread_required)

    def outcome(
        self, call: ToolCall, scope: Scope, context: dict[str, Any] | None, *, resumed: bool = False
    ) -> Outcome:
        """The call's outcome, waited for until the rule's deadline (or `timeout`). Under a
        `SignoffConfirmationHook`, the run is kept before it waits, and the outcome is noted for
        the turn, whose calls then run once by their execution record (see `.turn`)."""
        turn = confirming_turn()
        if turn is None:
            return self.gate.review(call, scope, timeout=self.timeout, resumed=resumed)
        found = self.gate.submit(call, scope, resumed=resumed)
        if isinstance(found, Pending):
            turn.keep(self, scope, context, found)
            found = self.gate.review(call, scope, timeout=self.timeout, resumed=resumed)
        turn.note(call, scope, found, self)
        return found

    async def aoutcome(
        self, call: ToolCall, scope: Scope, context: dict[str, Any] | None, *, resumed: bool = False
    ) -> Outcome:
        """`outcome` as a coroutine: waiting holds no thread."""
        turn = confirming_turn()
        if turn is None:
            return await self.gate.areview(call, scope, timeout=self.timeout, resumed=resumed)
        found = await self.gate.asubmit(call, scope, resumed=resumed)
        if isinstance(found, Pending):
            await asyncio.to_thread(turn.keep, self, scope, context, found)
            found = await self.gate.areview(call, scope, timeout=self.timeout, resumed=resumed)
        turn.note(call, scope, found, self)
        return found

    def submit(self, call: ToolCall, scope: Scope, *, resumed: bool = False) -> Outcome | Pending:
        return self.gate.submit(call, scope, resumed=resumed)

    async def asubmit(self, call: ToolCall, scope: Scope, *, resumed: bool = False) -> Outcome | Pending:
        return await self.gate.asubmit(call, scope, resumed=resumed)

    def decision(self, outcome: Outcome) -> ToolExecutionDecision:
        return execution_decision(outcome, self.gate.store)
