"""signoff's inbox for the stock `HumanInTheLoopMiddleware`, for agents that keep it.

    opened = open_stock_requests(agent, config, gate)     # the interrupt's calls, as signoff requests
    command = stock_resume(agent, config, gate)           # once all are decided: the resume value
    agent.invoke(command, config)
    result = resume_stock_when_decided(agent, config, gate)   # or: wait for the decisions, resume

The thread's pending stock interrupt (`action_requests` / `review_configs`) becomes one signoff
request per action, keyed by (thread_id, the tool_call_id of the call it stands for), so opening
twice creates nothing twice. The stock middleware lists the last AIMessage's gated calls in
order (those in `interrupt_on` whose `when` says yes), so the actions are matched to the calls by
position: the k-th action is the k-th call of its name and args left after the earlier matches.

The resume value is built only once every request is decided, in the interrupt's order, and is
checked against the interrupt's `review_configs` (the stock decision types) before it is returned:
a value the stock middleware refuses would be saved with the interrupt and fail every resume of
the thread after it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain.agents.middleware.human_in_the_loop import _decision_schema
from langchain_core.messages import AIMessage
from langchain_core.messages import ToolCall as LcToolCall
from langchain_core.runnables import RunnableConfig
from langgraph.types import Command
from pydantic import TypeAdapter, ValidationError

from signoff import (
    Edit,
    Gate,
    Outcome,
    Pending,
    Reject,
    Request,
    RequestNotReady,
    Respond,
    Scope,
    ToolCall,
    ToolEntry,
)

from .config import thread_of


@dataclass(frozen=True, kw_only=True)
class StockAction:
    """One action of a stock interrupt and the model's call it stands for."""

    tool_call: LcToolCall
    action: Mapping[str, Any]
    review_config: Mapping[str, Any]


@dataclass(frozen=True, kw_only=True)
class StockReview:
    """A thread's pending stock interrupt, its actions, and signoff's answer for each so far."""

    interrupt_id: str
    actions: tuple[StockAction, ...]
    found: tuple[Outcome | Pending, ...]
    gate: Gate
    """The gate the requests were made through, with the interrupt's review configs declared."""

    @property
    def requests(self) -> list[Request]:
        """The requests still waiting for a person."""
        return [item.request for item in self.found if isinstance(item, Pending)]

    @property
    def ready(self) -> bool:
        return not self.requests


def open_stock_requests(
    agent: Any, config: RunnableConfig, gate: Gate, *, scope: Scope | None = None
) -> StockReview:
    """Make (or find again) the signoff request of each action of the thread's stock interrupt.

    `scope` adds agent/app/requester (its thread is the run's). Each action's tool gets the
    interrupt's review config as its code-declared default (the store's layers still apply: where
    they say nobody need ask, signoff's answer is approve)."""
    thread_id = thread_of(config)
    snapshot = agent.get_state(config)
    interrupt_id, value = _stock_interrupt(snapshot.interrupts, thread_id)
    actions = _match_actions(snapshot.values, value, thread_id)
    run_scope = _run_scope(config, scope)
    found: list[Outcome | Pending] = []
    # the interrupt is a component of the gate: its review configs are its own declarations
    gate = gate.component(
        tools={
            item.tool_call["name"]: ToolEntry(
                requires_approval=True,
                allowed_decisions=list(item.review_config.get("allowed_decisions") or ()),
            )
            for item in actions
        }
    )
    for item in actions:
        name = item.tool_call["name"]
        call = ToolCall(
            name=name,
            args=dict(item.tool_call["args"]),
            id=item.tool_call["id"],
            description=item.action.get("description"),
        )
        found.append(gate.submit(call, run_scope, resumed=True))  # its request may be decided
    return StockReview(interrupt_id=interrupt_id, actions=tuple(actions), found=tuple(found), gate=gate)


def stock_resume(
    agent: Any, config: RunnableConfig, gate: Gate, *, scope: Scope | None = None
) -> Command[Any]:
    """The `Command(resume={"decisions": [...]})` for the thread's stock interrupt, once every
    action is decided in signoff. Raises `RequestNotReady` (naming the undecided requests) while
    some are not, and ValueError if a decision does not fit the interrupt's review configs."""
    review = open_stock_requests(agent, config, gate, scope=scope)
    if not review.ready:
        waiting = ", ".join(f"{r.id} ({r.tool_name}, {r.tool_call_id})" for r in review.requests)
        raise RequestNotReady(
            f"{len(review.requests)} of {len(review.actions)} calls are still undecided: {waiting}; "
            "nothing is sent until all are"
        )
    decisions = [
        stock_decision(item, found, gate) for item, found in zip(review.actions, review.found, strict=True)
    ]
    check_decisions(review.actions, decisions)
    return Command(resume={review.interrupt_id: {"decisions": decisions}})


def resume_stock_when_decided(
    agent: Any,
    config: RunnableConfig,
    gate: Gate,
    *,
    scope: Scope | None = None,
    timeout: float | None = None,
    version: str = "v2",
) -> Any:
    """Open the requests, block until every one is decided (or expired: its `on_expire`), then
    resume the run with their decisions and return what `agent.invoke` returns."""
    review = open_stock_requests(agent, config, gate, scope=scope)
    run_scope = _run_scope(config, scope)
    for request in review.requests:
        call = ToolCall(name=request.tool_name, args=request.args, id=request.tool_call_id)
        review.gate.review(call, run_scope, resumed=True)
    return agent.invoke(stock_resume(agent, config, gate, scope=scope), config, version=version)


def stock_decision(item: StockAction, found: Outcome | Pending, gate: Gate) -> dict[str, Any]:
    """signoff's answer for one action as a stock decision."""
    assert isinstance(found, Outcome)
    name = item.tool_call["name"]
    record = gate.store.get_request(found.request_id).decision if found.request_id else None
    decision = record.decision if record is not None else None
    if isinstance(decision, Edit):
        return {"type": "edit", "edited_action": {"name": name, "args": dict(found.final_tool_params or {})}}
    if isinstance(decision, Respond):
        answer = decision.answer
        return {"type": "respond", "message": answer if isinstance(answer, str) else json.dumps(answer)}
    if isinstance(decision, Reject):
        return {"type": "reject", "message": decision.message} if decision.message else {"type": "reject"}
    if found.execute:  # approved, approved on expiry, or not asked by signoff's rules
        return {"type": "approve"}
    return {"type": "reject", "message": found.model_text or "The tool was not executed."}


def check_decisions(actions: Sequence[StockAction], decisions: Sequence[dict[str, Any]]) -> None:
    """Refuse (ValueError) what the stock middleware would refuse on resume: a count other than
    the actions', or a decision its review config does not allow or whose shape is not stock."""
    if len(decisions) != len(actions):
        raise ValueError(f"{len(decisions)} decisions for {len(actions)} actions")
    for position, (item, decision) in enumerate(zip(actions, decisions, strict=True)):
        name = item.tool_call["name"]
        allowed = item.review_config.get("allowed_decisions") or ()
        if decision.get("type") not in allowed:
            raise ValueError(
                f"action {position} ({name}): signoff's decision {decision.get('type')!r} is not one the "
                f"stock middleware allows for it ({', '.join(allowed)}); nothing is sent"
            )
        try:
            TypeAdapter(_decision_schema(list(allowed), name)).validate_python(decision)
        except ValidationError as exc:
            raise ValueError(f"action {position} ({name}): not a stock decision: {exc}") from None


def _run_scope(config: RunnableConfig, scope: Scope | None) -> Scope:
    base = scope or Scope()
    return Scope(
        thread_id=thread_of(config),
        agent=base.agent,
        app=base.app,
        requester=base.requester,
        unattended=base.unattended,
    )


def _stock_interrupt(interrupts: Any, thread_id: str) -> tuple[str, Mapping[str, Any]]:
    for item in interrupts or ():
        value = getattr(item, "value", None)
        if isinstance(value, dict) and "action_requests" in value and "signoff" not in value:
            return str(item.id), value
    raise ValueError(f"thread {thread_id!r} has no pending HumanInTheLoopMiddleware interrupt")


def _match_actions(values: Mapping[str, Any], value: Mapping[str, Any], thread_id: str) -> list[StockAction]:
    """The calls of the last AIMessage the interrupt's actions stand for, by position."""
    messages = values.get("messages") or []
    last = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    calls: list[LcToolCall] = list(last.tool_calls) if last is not None else []
    actions = list(value.get("action_requests") or [])
    configs = list(value.get("review_configs") or [])
    matched: list[StockAction] = []
    start = 0
    for action, review_config in zip(actions, configs, strict=True):
        same = [i for i in range(start, len(calls)) if _stands_for(action, calls[i])]
        if not same:
            raise ValueError(
                f"thread {thread_id!r}: the interrupt's action {action.get('name')!r} matches no tool "
                "call of the last AI message"
            )
        index = same[0]
        matched.append(StockAction(tool_call=calls[index], action=action, review_config=review_config))
        start = index + 1
    _refuse_ambiguous(calls, matched, thread_id)
    return matched


def _stands_for(action: Mapping[str, Any], call: LcToolCall) -> bool:
    return action.get("name") == call["name"] and action.get("args") == call["args"]


def _refuse_ambiguous(calls: Sequence[LcToolCall], matched: Sequence[StockAction], thread_id: str) -> None:
    """Identical calls (same tool, same args) of which only some were gated (a `when` that looks
    at the call's id) cannot be told apart by position: refuse rather than guess."""
    chosen = {id(item.tool_call) for item in matched}
    for item in matched:
        twins = [
            c for c in calls if c["name"] == item.tool_call["name"] and c["args"] == item.tool_call["args"]
        ]
        if any(id(twin) not in chosen for twin in twins):
            raise ValueError(
                f"thread {thread_id!r}: the interrupt's {item.tool_call['name']!r} action matches several "
                "identical tool calls of which only some were gated; cannot tell which it stands for"
            )
