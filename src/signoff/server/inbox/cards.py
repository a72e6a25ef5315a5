"""A card: one request as the inbox, the request page and a handle link show it.

The card shows what is asked (tool, description, redacted args, who asked, the deadline) and,
while the request is pending, only the buttons its rule allows. A drafting card shows the args
so far with its buttons disabled. A finished card says how it ended.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from ..._util import display_json
from ...errors import (
    AlreadyDecided,
    NotAnApprover,
    RequestExpired,
    RequestNotReady,
    SignoffError,
)
from ...identity import User
from ...requests import Request, RequestStatus
from ...store.request_ops import may_decide
from ...templates import redact_args
from ..previews import Preview, preview, preview_text
from .decision_form import DECISION_ORDER, answer_fields, edit_fields
from .schema_form import FormField, with_submitted

CardMode = Literal["live", "link"]
"""live: forms post through htmx with the session's CSRF token; link: plain forms to a handle."""

ENDED_WORDS = {
    RequestStatus.APPROVED: "Approved",
    RequestStatus.EDITED: "Approved with changes",
    RequestStatus.REJECTED: "Rejected",
    RequestStatus.RESPONDED: "Answered",
    RequestStatus.EXPIRED: "Expired",
    RequestStatus.CANCELLED: "Cancelled by the agent",
}
PANELS = ("edit", "reject", "respond")
"""The decisions that open a form before they are sent."""
DONE_WORDS = {
    "approve": "Approved.",
    "edit": "Approved with your changes.",
    "reject": "Rejected.",
    "respond": "Answer sent.",
}


@dataclass(frozen=True, kw_only=True)
class Card:
    request: Request
    mode: CardMode = "live"
    decide_url: str = ""
    error: str | None = None
    notice: str | None = None
    open_panel: str | None = None
    """The panel (edit, reject, respond) to show open: the one whose form had a problem."""
    submitted: Mapping[str, str] = field(default_factory=dict)
    details_link: bool = True
    """Link to the request page (not on the request page itself)."""
    viewer: User | None = None
    """Who looks at the card: someone who may see but not decide gets no buttons."""
    eager: bool = False
    """Render the edit and respond forms with the card. In a list they are fetched when opened,
    which keeps a page of 50 cards small and quick."""

    @property
    def id(self) -> str:
        return self.request.id

    @property
    def url(self) -> str:
        return self.decide_url or f"/inbox/cards/{self.request.id}/decide"

    @property
    def status(self) -> str:
        return self.request.status.value

    @property
    def drafting(self) -> bool:
        return self.request.status is RequestStatus.DRAFTING

    @property
    def open(self) -> bool:
        return not self.request.is_terminal

    @property
    def decidable(self) -> bool:
        return self.request.status is RequestStatus.PENDING

    @property
    def viewer_decides(self) -> bool:
        viewer = self.viewer
        if viewer is None:
            return True
        return not viewer.is_agent and may_decide(self.request, viewer.name, viewer.groups)

    @property
    def actions(self) -> tuple[str, ...]:
        """The decisions to offer, in a steady order: only those the rule allows (and a quorum
        only approves or rejects)."""
        rule = self.request.rule
        allowed = set(rule.allowed_decisions)
        if rule.quorum > 1:
            allowed &= {"approve", "reject"}
        return tuple(kind for kind in DECISION_ORDER if kind in allowed)

    @property
    def panels(self) -> tuple[str, ...]:
        """The decisions that open a form first, in button order."""
        return tuple(kind for kind in self.actions if kind in PANELS)

    @property
    def inline_panels(self) -> bool:
        return self.eager or self.mode == "link"

    @property
    def _cuts(self) -> bool:
        """A card in one of the inbox's lists shows long values cut; its request page, and a
        handle link's page, show them whole."""
        return self.details_link and self.mode == "live"

    @cached_property
    def _args(self) -> Preview:
        """The (redacted) args as the card shows them."""
        args = self.request.shown_args()
        return preview(args) if self._cuts else Preview(args, False)

    @property
    def truncated(self) -> bool:
        """Long values were cut: the request page shows them whole."""
        return any(shown.cut for shown in (self._args, self._description, self._final_args, self._said))

    @property
    def arg_rows(self) -> list[tuple[str, str]]:
        """(name, value) per argument: text as it is, anything else as JSON."""
        return [
            (name, value if isinstance(value, str) else display_json(value))
            for name, value in self._args.value.items()
        ]

    @property
    def description_text(self) -> str:
        """The description, without the default template's closing "Tool: …\nArgs: …" lines
        when the card shows the same arguments right below it."""
        return str(self._description.value)

    @cached_property
    def _description(self) -> Preview:
        request = self.request
        repeated = f"\n\nTool: {request.tool_name}\nArgs: {display_json(request.shown_args())}"
        text = request.description
        if text.endswith(repeated) and len(text) > len(repeated):
            text = text[: -len(repeated)]
        return preview_text(text) if self._cuts else Preview(text, False)

    @property
    def shows_args(self) -> bool:
        return bool(self.request.args) or self.request.kind == "tool"

    def edit_fields(self) -> list[FormField]:
        fields = edit_fields(self.request)
        return with_submitted(fields, self.submitted) if self.open_panel == "edit" else fields

    def answer_fields(self) -> list[FormField] | None:
        fields = answer_fields(self.request)
        if fields is not None and self.open_panel == "respond":
            return with_submitted(fields, self.submitted)
        return fields

    def typed(self, panel: str, name: str) -> str:
        """What was typed in a plain field of `panel`, when it is the one shown again."""
        return self.submitted.get(name, "") if self.open_panel == panel else ""

    @property
    def ended(self) -> str | None:
        """How it ended, in words: 'Approved by alice'."""
        request = self.request
        if not request.is_terminal:
            return None
        words = ENDED_WORDS.get(request.status, request.status.value)
        if request.decision is not None:
            return f"{words} by {request.decision.actor}"
        resolution = request.resolution or {}
        if request.status is RequestStatus.CANCELLED and resolution.get("actor"):
            return f"{words} ({resolution['actor']})"
        return words

    @property
    def ended_via(self) -> str | None:
        return self.request.decision.channel if self.request.decision is not None else None

    @property
    def said(self) -> str | None:
        """The words that came with the decision: a reason, a comment, an answer."""
        said = self._said.value
        return str(said) if said is not None else None

    @cached_property
    def _said(self) -> Preview:
        said = self._said_in_full()
        if said is None or not self._cuts:
            return Preview(said, False)
        return preview_text(said)

    def _said_in_full(self) -> str | None:
        request = self.request
        if request.decision is not None:
            decision = request.decision.decision
            for name in ("message", "comment"):
                value = getattr(decision, name, None)
                if value:
                    return str(value)
            value = getattr(decision, "value", None)
            if value is not None:
                return pretty_json(value)
            return None
        reason = (request.resolution or {}).get("reason")
        return str(reason) if reason else None

    @property
    def final_args_text(self) -> str | None:
        request = self.request
        if request.status is not RequestStatus.EDITED or request.final_args is None:
            return None
        return pretty_json(self._final_args.value)

    @cached_property
    def _final_args(self) -> Preview:
        request = self.request
        if request.final_args is None:
            return Preview(None, False)
        shown = redact_args(request.final_args, request.rule.redact)
        return preview(shown) if self._cuts else Preview(shown, False)

    @property
    def quorum_note(self) -> str | None:
        rule = self.request.rule
        if rule.quorum <= 1:
            return None
        return f"{len(self.request.approvals)} of {rule.quorum} approvals"


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def refusal_text(error: SignoffError, request: Request | None) -> str:
    """A decision error as a person reads it on the card: 'Already approved by alice.'"""
    if isinstance(error, AlreadyDecided) and request is not None and request.is_terminal:
        if request.status is RequestStatus.CANCELLED:
            return "The agent cancelled this request."
        if request.decision is not None:
            return f"Already {ENDED_WORDS[request.status].lower()} by {request.decision.actor}."
    if isinstance(error, RequestExpired):
        return "This request has expired; the agent was told."
    if isinstance(error, RequestNotReady):
        return "Still drafting: the agent has not finished its arguments yet."
    if isinstance(error, NotAnApprover):
        return "You are not an approver of this request."
    message = error.message
    return message[0].upper() + message[1:] if message else type(error).__name__
