"""What a person reads when a decision is refused, or about how a request ended: the same words
on the inbox's card, a handle link and the chat channels' answers."""

from __future__ import annotations

from ..errors import (
    AlreadyDecided,
    NotAnApprover,
    RequestExpired,
    RequestNotReady,
    SeparationOfDuties,
    SignoffError,
)
from ..outcome import UNATTENDED_CHANNEL
from ..requests import Request, RequestStatus

LOCAL_AGENT = "agent"
"""The actor a local gate records for its own calls (e.g. `gate.cancel`)."""


def ended_text(request: Request) -> str | None:
    """How a request ended, in words: 'Approved by alice', 'Approved by alice, through standing
    grant grt_…', 'Rejected automatically (unattended run)', 'Cancelled by alice', 'Cancelled by
    the agent (bot)'; None while it is open."""
    if not request.is_terminal:
        return None
    words = request.status.in_words.capitalize()
    record = request.decision
    if record is not None:
        if record.channel == UNATTENDED_CHANNEL:
            return f"{words} automatically (unattended run)"
        if request.grant_id is not None:
            return f"{words} by {record.actor}, through standing grant {request.grant_id}"
        return f"{words} by {record.actor}"
    actor = (request.resolution or {}).get("actor")
    if request.status is RequestStatus.CANCELLED and actor:
        # the gate cancels as its own actor ("agent"); through the API, as the agent's user
        if actor in (request.created_by, LOCAL_AGENT):
            return f"{words} by the agent" + ("" if actor == LOCAL_AGENT else f" ({actor})")
        return f"{words} by {actor}"
    return words


def refusal_text(error: SignoffError, request: Request | None) -> str:
    """A decision error as a person reads it on the card: 'Already approved by alice.'"""
    if isinstance(error, AlreadyDecided) and request is not None and request.is_terminal:
        ended = ended_text(request)
        if request.status is RequestStatus.CANCELLED:
            return f"{ended}."
        if request.decision is not None:
            return f"Already {ended[0].lower()}{ended[1:]}." if ended else "Already decided."
    if isinstance(error, RequestExpired):
        return "This request has expired; the agent was told."
    if isinstance(error, RequestNotReady):
        return "Still drafting: the agent has not finished its arguments yet."
    if isinstance(error, SeparationOfDuties):
        return "Four eyes: you may not approve this request; another approver must. You may reject it."
    if isinstance(error, NotAnApprover):
        return "You are not an approver of this request."
    message = error.message
    return message[0].upper() + message[1:] if message else type(error).__name__
