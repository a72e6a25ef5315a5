"""signoff's decisions as what the model sees in a tool's place (a Strands `ToolResult`), and the
reason of the interrupt that pauses a call.

approve          → the tool's result, as without signoff
edit             → the tool's result after a text block with the rule's modify note (the model's
                   history keeps the args it produced, so it is told what ran)
reject, expiry   → an error result with the rule's rejection text and the person's reason (as
                   Strands' own `cancel_tool` gives one; its `Confirm` intervention says
                   "CONFIRMATION_FAILED: <prompt>", without a reason)
respond          → a result with the person's answer

A tool's result is kept in signoff's execution record as the `ToolResult` dict, so that a call
resumed again gives the model the same result without running the tool.
"""

from __future__ import annotations

from typing import Any

from strands.types.tools import ToolResult

from signoff import Pending, Reply

from .._paused import waiting_on

SIGNOFF_KEY = "signoff"
"""The key of signoff's entry in an interrupt's reason (and in the responses `resume` sends)."""

INTERRUPT_NAME = "signoff"
"""The name of the interrupt that pauses a call; a call paused again after a resume with its
decision still open gets `signoff#2`, `signoff#3`... (Strands answers a name once per call)."""


def text_result(tool_use_id: str, text: str, *, error: bool = False) -> ToolResult:
    return {"toolUseId": tool_use_id, "status": "error" if error else "success", "content": [{"text": text}]}


def model_view(reply: Reply, tool_use_id: str) -> ToolResult:
    """What the model gets in the call's place (see the module)."""
    outcome = reply.outcome
    if reply.executed or reply.replayed:
        stored: ToolResult = reply.value
        content = list(stored["content"])
        if outcome.decision == "edit" and outcome.feedback:
            content = [{"text": outcome.feedback}, *content]
        return {"toolUseId": tool_use_id, "status": stored["status"], "content": content}
    return text_result(tool_use_id, outcome.model_text or "", error=reply.is_error)


def pause_reason(pending: Pending, tool_use: Any) -> dict[str, Any]:
    """The interrupt's reason: the signoff request the call waits on, and the call."""
    return {
        SIGNOFF_KEY: {
            **waiting_on(pending.request),
            "tool": tool_use["name"],
            "tool_use_id": tool_use["toolUseId"],
            "input": tool_use["input"],
        }
    }


def interrupt_name(attempt: int) -> str:
    return INTERRUPT_NAME if attempt == 1 else f"{INTERRUPT_NAME}#{attempt}"


def is_ours(name: str, reason: Any) -> bool:
    """Whether an interrupt is one signoff raised (its name, and a reason naming a request)."""
    ours = name == INTERRUPT_NAME or name.startswith(f"{INTERRUPT_NAME}#")
    return ours and isinstance(reason, dict) and SIGNOFF_KEY in reason
