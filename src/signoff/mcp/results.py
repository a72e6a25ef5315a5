"""The `tools/call` answers the proxy writes itself (the upstream's own pass through untouched)."""

from __future__ import annotations

from typing import Any

from ..outcome import Outcome
from ..requests import Execution, Request


def text_result(text: str, *, is_error: bool) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def outcome_result(outcome: Outcome) -> dict[str, Any]:
    """A call that did not run: the rejection, expiry or cancellation text (an error), or the
    person's answer in the tool's place (a result)."""
    return text_result(outcome.model_text or "", is_error=outcome.is_error)


def with_note(result: dict[str, Any], note: str) -> dict[str, Any]:
    """The tool's result after a person edited the args: the note (what changed) comes first."""
    content = result.get("content")
    if not isinstance(content, list):
        return result
    return {**result, "content": [{"type": "text", "text": note}, *content]}


def awaiting_result(request: Request, *, waited: float, inbox: str | None) -> dict[str, Any]:
    """`--max-wait` ran out: nothing ran; calling again with the same args continues."""
    who = ", ".join(request.rule.approvers) or "any person"
    where = f"; decide at {inbox.rstrip('/')}/requests/{request.id}" if inbox else ""
    text = (
        f"The call to {request.tool_name} awaits approval (request {request.id}; who may decide: "
        f"{who}{where}). Nothing ran yet; no decision arrived within {waited:g} s. Call the tool "
        "again with the same arguments to continue: that call waits for the same request, and the "
        "tool runs at most once."
    )
    return text_result(text, is_error=True)


def in_doubt_result(
    request: Request, execution: Execution | None, *, service: str, still_running: bool
) -> dict[str, Any]:
    """A call that was running when an earlier proxy stopped (or is running in another process
    now): it may or may not have taken effect, so it is neither asked about again nor run again;
    the client is told what to check and how a person lets it run."""
    if still_running:
        owner = (execution.owner if execution is not None else None) or {}
        where = f"process {owner.get('pid', '?')} on {owner.get('host', 'an unknown host')}"
        state = f"is being run right now by another {where}"
    else:
        state = "was running when the proxy running it stopped, so it is in doubt"
    text = (
        f"The call to {request.tool_name} (request {request.id}) {state}; it may or may not have taken "
        f"effect. It was not run again and nobody was asked again. Check in {service} whether it took "
        f"effect. If it did not and it should, a person lets it run again: signoff rerun {request.id} "
        "(or the request's page in the inbox); then call the tool again with the same arguments."
    )
    return text_result(text, is_error=True)
