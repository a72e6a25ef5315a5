"""Resuming an agent that signoff paused: the interrupt responses it takes.

Strands keeps a paused call's interrupt (named "signoff", its reason naming signoff's request) in
the agent's interrupt state, which its session manager saves. Once signoff's decision is in, the
agent is called with a response to each; the hook then reads the decision from signoff's store
(the response only says what signoff decided, for the record).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from strands import Agent
from strands.agent import AgentResult
from strands.interrupt import Interrupt
from strands.types.interrupt import InterruptResponseContent

from signoff import Gate, Outcome, Pending, ToolCall

from .._scope import ScopeDefaults
from .results import SIGNOFF_KEY, is_ours
from .scope import agent_scope


@dataclass(frozen=True)
class Decided:
    """A paused agent's signoff calls: the interrupt responses of those decided, and those still
    waiting for a person."""

    responses: list[InterruptResponseContent] = field(default_factory=list)
    pending: list[Pending] = field(default_factory=list)


@dataclass(frozen=True)
class Resumed:
    """Where a resumed agent stands: the result of the run that went on, or `pending` (nothing ran)."""

    result: AgentResult | None = None
    pending: list[Pending] = field(default_factory=list)

    @property
    def paused(self) -> bool:
        """Still undecided, or paused again (a later call of the run asks)."""
        return bool(self.pending) or (self.result is not None and self.result.stop_reason == "interrupt")


def open_interrupts(agent: Agent) -> list[Interrupt]:
    """The agent's interrupts that signoff raised and nobody answered yet."""
    state = agent._interrupt_state
    if not state.activated:
        return []
    return [i for i in state.interrupts.values() if i.response is None and is_ours(i.name, i.reason)]


def asked_call(interrupt: Interrupt) -> ToolCall:
    paused = interrupt.reason[SIGNOFF_KEY]
    return ToolCall(name=paused["tool"], args=dict(paused["input"]), id=paused["tool_use_id"])


def response(interrupt: Interrupt, outcome: Outcome) -> InterruptResponseContent:
    signoff = {"request_id": outcome.request_id, "decision": outcome.decision, "status": outcome.status}
    return {"interruptResponse": {"interruptId": interrupt.id, "response": {SIGNOFF_KEY: signoff}}}


def decided(gate: Gate, agent: Agent, defaults: ScopeDefaults) -> Decided:
    scope = agent_scope(agent, defaults)
    found = Decided()
    for interrupt in open_interrupts(agent):
        result = gate.submit(asked_call(interrupt), scope, resumed=True)
        if isinstance(result, Pending):
            found.pending.append(result)
        else:
            found.responses.append(response(interrupt, result))
    return found


async def adecided(gate: Gate, agent: Agent, defaults: ScopeDefaults) -> Decided:
    scope = agent_scope(agent, defaults)
    found = Decided()
    for interrupt in open_interrupts(agent):
        result = await gate.asubmit(asked_call(interrupt), scope, resumed=True)
        if isinstance(result, Pending):
            found.pending.append(result)
        else:
            found.responses.append(response(interrupt, result))
    return found


def nothing_paused(agent: Agent) -> LookupError:
    return LookupError(
        f"agent {agent.agent_id!r} of session {agent.session_id!r} has no call paused by signoff: "
        "nothing to resume (its run went on already, or something else paused it)"
    )


def resume(gate: Gate, defaults: ScopeDefaults, agent: Agent, **invoke: Any) -> Resumed:
    found = decided(gate, agent, defaults)
    if found.pending:
        return Resumed(pending=found.pending)
    if not found.responses:
        raise nothing_paused(agent)
    return Resumed(result=agent(list(found.responses), **invoke))


async def aresume(gate: Gate, defaults: ScopeDefaults, agent: Agent, **invoke: Any) -> Resumed:
    found = await adecided(gate, agent, defaults)
    if found.pending:
        return Resumed(pending=found.pending)
    if not found.responses:
        raise nothing_paused(agent)
    return Resumed(result=await agent.invoke_async(list(found.responses), **invoke))
