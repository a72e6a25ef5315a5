"""`result.interruptions` as signoff requests, and signoff's decisions applied to the `RunState`.

Each `ToolApprovalItem` becomes one request, keyed by the run's thread_id and the item's call_id,
so finding them again (a resume, a replay) creates nothing twice. Decisions apply as the SDK
takes them:

- approve, and an edit: `state.approve(item)`. The tool then runs through signoff's invoker
  (`tools.GatedInvoker`), exactly once, with the edited args. A tool without that invoker cannot
  run edited args: a rule that allows `edit` for such a tool is refused (`signoff.ConfigError`)
  before its request is made, so nobody is offered a decision that cannot be applied.
- reject: `state.reject(item, rejection_message=...)` with signoff's rejection text (the rule's
  reject template and the person's feedback): the model gets exactly that as the call's output.
- respond: also `state.reject(item, rejection_message=<the answer>)`: the tool does not run and
  the model gets the person's answer, verbatim (a dict as JSON), as the call's output, the same
  `function_call_output` item a tool result is.
- a deadline passed: the rule's `on_expire` (approve runs the tool; otherwise its expire message
  is the call's output); a cancelled request: the cancellation text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from agents import Agent, FunctionTool, RunState
from agents.items import ToolApprovalItem

from signoff import ConfigError, Gate, Outcome, Pending, Scope, ToolCall, ToolEntry

from .._rounds import turn_round
from .tools import GatedInvoker, is_gated


@dataclass(frozen=True)
class Found:
    """One interruption and what signoff has for it: its outcome, or the request still waiting."""

    item: ToolApprovalItem
    call: ToolCall
    result: Outcome | Pending


def item_call_id(item: ToolApprovalItem) -> str:
    call_id = item.call_id
    if not call_id:
        raise ValueError(f"the interruption of {item.name!r} has no call_id: signoff keys each request by it")
    return call_id


def tool_of(agent: Agent[Any], item: ToolApprovalItem) -> Any:
    """The agent's tool an interruption is for (None for hosted and other non-function tools)."""
    owner = item.agent if isinstance(item.agent, Agent) else agent
    for tool in owner.tools:
        if isinstance(tool, FunctionTool) and tool.name == item.tool_name:
            return tool
    return None


def signoff_call(agent: Agent[Any], item: ToolApprovalItem) -> ToolCall:
    """The request's call: the tool's name, the model's args, its call_id, description and schema."""
    tool = tool_of(agent, item)
    if isinstance(tool, FunctionTool) and isinstance(tool.on_invoke_tool, GatedInvoker):
        return tool.on_invoke_tool.call(_args(item), item_call_id(item))
    name = item.tool_name or item.name or "tool"
    return ToolCall(
        name=name,
        args=_args(item),
        id=item_call_id(item),
        description=getattr(tool, "description", None),
        schema=getattr(tool, "params_json_schema", None),
    )


def _args(item: ToolApprovalItem) -> dict[str, Any]:
    raw = item.arguments
    if not raw:
        return {}
    parsed = json.loads(raw)
    return parsed if isinstance(parsed, dict) else {"input": parsed}


def check_editable(
    gate: Gate, agent: Agent[Any], item: ToolApprovalItem, call: ToolCall, scope: Scope
) -> None:
    """Refuse a rule that offers `edit` for a call whose tool cannot run edited args."""
    if is_gated(tool_of(agent, item)):
        return
    if call.name not in gate.rules().tools:  # the tool asked by itself: its own rule is "ask"
        gate.register_tool(call.name, ToolEntry(requires_approval=True))
    rule = gate.explain(
        call.name, agent=scope.agent, app=scope.app, args=call.args, requester=scope.requester
    )
    if "edit" in rule.rule.allowed_decisions:
        raise ConfigError(
            f"the rule for {call.name!r} allows edit, but the Agents SDK cannot run edited args "
            "for a tool signoff did not wrap: gate it with SignoffApproval.gate_tool (function "
            "tools), or drop edit from the rule's allowed_decisions"
        )


async def submit_all(
    gate: Gate, agent: Agent[Any], items: Sequence[ToolApprovalItem], scope: Scope, *, wait: bool = False
) -> list[Found]:
    """Each interruption's request (made once), with its outcome if decided (`wait`: waits for it,
    until the rule's deadline). The SDK interrupts once per model turn: the batch is one round."""
    round = turn_round(None, (item_call_id(item) for item in items))
    found = []
    for item in items:
        call = replace(signoff_call(agent, item), round=round)
        check_editable(gate, agent, item, call, scope)
        # resumed: a resumed run's calls were asked about: their decisions stand, whatever the
        # rules say now (a first run's interruptions ask anyway)
        result = await (
            gate.areview(call, scope, resumed=True) if wait else gate.asubmit(call, scope, resumed=True)
        )
        found.append(Found(item, call, result))
    return found


def apply(state: RunState[Any, Any], found: Sequence[Found]) -> None:
    """Apply the decided outcomes to `state` (see the module); the undecided stay interruptions."""
    for entry in found:
        outcome = entry.result
        if isinstance(outcome, Pending):
            continue
        if outcome.execute:
            state.approve(entry.item)
        else:
            state.reject(entry.item, rejection_message=outcome.model_text or "")
