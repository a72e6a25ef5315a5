"""signoff's decisions as the permission results the Claude Agent SDK takes, and what the model sees.

The CLI runs the tool (signoff cannot run it in its place): `can_use_tool` can only allow the call,
with the input it runs with, or deny it with a message the model reads as the tool's error.

approve          → allowed with the model's input; the model sees the tool's result
edit             → allowed with the person's input (`updated_input`); the model sees the tool's
                   result, and the rule's modify note as context after it (a PostToolUse hook)
reject, expiry   → denied: the rule's rejection text, with the person's reason
respond          → denied: the SDK has no way to give an answer as a tool's result (a denial is
                   read as the tool's error, and a PostToolUse output replaces a result only after
                   the tool ran), so the call does not run and the model is told so, with the
                   answer (`respond_text`)
run already      → denied (`ran_text`): signoff's execution record holds the call as handed to the
                   CLI once; a call asked about again (a resumed session) does not run twice
signoff refused  → denied and the turn interrupted (`refused_text`): an unattended run's cap, a
                   store that is down, a wait that timed out
"""

from __future__ import annotations

from typing import Any

from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny

from signoff import Reply

ALLOW = PermissionResultAllow()
"""Allowed with the model's own input (the SDK sends it back unchanged)."""

HANDED_OVER = "handed to Claude Code to run"
"""What signoff's execution record keeps as the call's result: the CLI runs the tool."""


def handed_over(**final: Any) -> dict[str, Any]:
    """The "tool" `gate.arun` runs: it records the call as handed over, with its final input."""
    return {"result": HANDED_OVER, "input": final}


def respond_text(tool: str, answer: str) -> str:
    return (
        f"A person answered instead of letting {tool} run. The Claude Agent SDK cannot give an "
        f"answer as a tool's result, so the call did not run. Their answer: {answer}"
    )


def ran_text(tool: str, request_id: str | None) -> str:
    return (
        f"This call of {tool} was already handed over to run once (signoff request {request_id}); "
        "signoff does not run it twice."
    )


def refused_text(tool: str, error: Exception) -> str:
    return f"signoff refused the call of {tool}, so it did not run: {error}"


def permission(tool: str, reply: Reply) -> PermissionResultAllow | PermissionResultDeny:
    """The permission result for a call signoff asked about (see the module)."""
    outcome = reply.outcome
    if reply.replayed:
        return PermissionResultDeny(message=ran_text(tool, outcome.request_id))
    if reply.executed:
        return PermissionResultAllow(updated_input=dict(outcome.final_tool_params or {}))
    text = outcome.model_text or ""
    if outcome.decision == "respond":
        return PermissionResultDeny(message=respond_text(tool, text))
    return PermissionResultDeny(message=text)


def edit_note(reply: Reply) -> str | None:
    """The rule's modify note of an edited call that runs, for the model after the tool's result."""
    outcome = reply.outcome
    if reply.executed and outcome.decision == "edit" and outcome.feedback:
        return outcome.feedback
    return None
