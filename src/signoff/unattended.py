"""Unattended runs (cron): nobody to ask, so a request is decided by its rule's `unattended` mode."""

from __future__ import annotations

from contextlib import suppress

from .backend import Backend
from .decisions import Approve, Decision, Reject
from .errors import AlreadyDecided, ApprovalRequiredUnattended, SignoffError
from .requests import Request

UNATTENDED_ACTOR = "unattended"


def decide_unattended(store: Backend, request: Request, tool_name: str) -> Request:
    """Decide a request of an unattended run (for a call of `tool_name`) by its `unattended` mode.

    The mode is the stored request's: through a server, the server's rule where it covers the
    tool, which may be stricter than the gate's. A request nobody may decide on its own is
    cancelled (a replay then finds it cancelled instead of waiting for nobody)."""
    if request.is_terminal:
        return request
    mode = request.rule.unattended
    if mode == "fail":
        _give_up(store, request, "the rule says unattended runs fail")
        raise ApprovalRequiredUnattended(f"{tool_name!r} needs approval and this run is unattended")
    decision: Decision = (
        Approve(comment="auto-approved: unattended")
        if mode == "approve"
        else Reject(message="auto-rejected: unattended")
    )
    try:
        return store.decide(
            request.id, decision, actor=UNATTENDED_ACTOR, channel="unattended", on_behalf=True
        )
    except AlreadyDecided:
        return store.get_request(request.id)
    except SignoffError as exc:  # the server refused it (its cap, its rule)
        _give_up(store, request, exc.message)
        raise


def _give_up(store: Backend, request: Request, why: str) -> None:
    with suppress(AlreadyDecided):
        store.cancel(
            request.id, actor=UNATTENDED_ACTOR, channel="unattended", reason=f"unattended run: {why}"
        )
