"""A card: one request as the inbox, the request page and a handle link show it.

The card shows what is asked (tool, description, redacted args, who asked, the deadline) and,
while the request is pending, only the buttons its rule allows. A drafting card shows the args
so far with its buttons disabled. A finished card says how it ended.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from ..changes import Change, changes, redacted
from ..decision_checks import may_decide
from ..errors import SignoffError
from ..identity import User
from ..outcome import UNATTENDED_CHANNEL
from ..requests import Request, RequestStatus
from ..rules.effective import DEFAULT_DESCRIPTION_PREFIX
from ..summary import call_summary
from ..templates import description_args, redact_args
from ..visible import hidden_in, visible, visible_json
from .decision_form import DECISION_ORDER, FormProblem, answer_fields, edit_fields
from .form_fields import FormField, with_errors, with_submitted
from .previews import Preview, preview, preview_text
from .refusals import ended_text

CardMode = Literal["live", "link"]
"""live: forms post through htmx with the session's CSRF token; link: plain forms to a handle."""

PANELS = ("edit", "reject", "respond")
"""The decisions that open a form before they are sent."""
NoticeKind = Literal["ok", "bad", "info"]
DONE_WORDS: dict[str, tuple[str, NoticeKind]] = {
    "approve": ("Approved.", "ok"),
    "edit": ("Approved with your changes.", "ok"),
    "reject": ("Rejected.", "bad"),
    "respond": ("Answer sent.", "info"),
}
"""What a person is told on the card right after deciding, and in which colour."""
QUESTION_TITLE = "Question"
DEFAULT_GRANT_MINUTES = 30


@dataclass(frozen=True, kw_only=True)
class Card:
    request: Request
    mode: CardMode = "live"
    decide_url: str = ""
    error: str | None = None
    notice: str | None = None
    notice_kind: NoticeKind = "ok"
    open_panel: str | None = None
    """The panel (edit, reject, respond) to show open: the one whose form had a problem."""
    submitted: Mapping[str, str] = field(default_factory=dict)
    field_errors: Mapping[str, str] = field(default_factory=dict)
    """What is wrong with each field of the open panel's form (form name → message)."""
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
    def title(self) -> str:
        """What the card is about: the tool's name, or "Question" for a person's input (`gate.ask`)."""
        return QUESTION_TITLE if self.request.kind == "input" else self.request.tool_name

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
    def selectable(self) -> bool:
        """A checkbox to decide it in a batch: in the inbox's list, open for the viewer's
        decision, and its rule does not keep it out of batches (`batch: false`)."""
        return (
            self.mode == "live"
            and self.details_link
            and self.decidable
            and self.request.rule.batch
            and self.viewer_decides
        )

    @property
    def actions(self) -> tuple[str, ...]:
        """The decisions to offer, in a steady order: only those the rule allows (and a quorum
        only approves or rejects)."""
        rule = self.request.rule
        allowed = set(rule.allowed_decisions)
        if rule.quorum > 1:
            allowed &= {"approve", "reject"}
        if self.viewer_separated:  # four eyes: they may only reject
            allowed &= {"reject"}
        return tuple(kind for kind in DECISION_ORDER if kind in allowed)

    @property
    def viewer_separated(self) -> bool:
        """The viewer is one the rule's four eyes keep from approving (`RequestRule.separated`)."""
        viewer = self.viewer
        return viewer is not None and viewer.name in self.request.rule.separated

    @property
    def four_eyes_note(self) -> str | None:
        """Who may not approve the open request (the viewer's own words when it is them)."""
        said = self.request.four_eyes()
        if said is None or not self.open:
            return None
        if self.viewer_separated:
            return "Four eyes: you may not approve this request; another approver must. You may reject it."
        return f"{said[0].upper()}{said[1:]}; they may still reject."

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
        """(name, value) per argument: text as it is, anything else as JSON. A question's own
        text is not repeated below it."""
        request = self.request
        return [
            (name, value if isinstance(value, str) else visible_json(value))
            for name, value in self._args.value.items()
            if not (request.kind == "input" and name == "question" and value == request.description)
        ]

    @property
    def description_text(self) -> str:
        """The description, without the default template's closing "Tool: …\nArgs: …" lines
        when the card shows the same arguments right below it; where it says no more than its
        prefix ("Tool execution requires approval"), the call's `summary` in its place (after
        an agent's own prefix)."""
        return str(self._description.value)

    @property
    def summary(self) -> str:
        """What the call does, made from its (redacted) args and the tool's schema."""
        request = self.request
        return call_summary(request.tool_name, request.shown_args(), request.args_schema)

    @cached_property
    def _description(self) -> Preview:
        request = self.request
        repeated = f"\n\nTool: {visible(request.tool_name)}\nArgs: {description_args(request.shown_args())}"
        text = request.description
        if text.endswith(repeated) and len(text) > len(repeated):
            text = text[: -len(repeated)]
        if request.kind == "tool" and text.strip() in ("", DEFAULT_DESCRIPTION_PREFIX):
            text = self.summary
        elif request.kind == "tool" and text == request.rule.description_prefix:
            text = f"{text}\n{self.summary}"
        return preview_text(text) if self._cuts else Preview(text, False)

    @property
    def hidden_characters(self) -> list[str]:
        """The characters a person would not see in what the card shows (args, description, the
        edited args, the words said), each once; the page writes them as escapes and warns."""
        request = self.request
        shown: list[Any] = [request.shown_args(), request.description]
        if request.final_args is not None:
            shown.append(redact_args(request.final_args, request.rule.redact))
        if self.said:
            shown.append(self.said)
        return hidden_in(shown, newlines=True)

    @property
    def shows_args(self) -> bool:
        return bool(self.arg_rows) or self.request.kind == "tool"

    def edit_fields(self) -> list[FormField]:
        fields = edit_fields(self.request)
        if self.open_panel != "edit":
            return fields
        return with_errors(with_submitted(fields, self.submitted), self.field_errors)

    def answer_fields(self) -> list[FormField] | None:
        fields = answer_fields(self.request)
        if fields is not None and self.open_panel == "respond":
            return with_errors(with_submitted(fields, self.submitted), self.field_errors)
        return fields

    def typed(self, panel: str, name: str) -> str:
        """What was typed in a plain field of `panel`, when it is the one shown again."""
        return self.submitted.get(name, "") if self.open_panel == panel else ""

    @property
    def ended(self) -> str | None:
        """How it ended, in words: 'Approved by alice', 'Cancelled by the agent (bot)'."""
        return ended_text(self.request)

    @property
    def ended_via(self) -> str | None:
        request = self.request
        if request.decision is not None:
            return None if request.decision.channel == UNATTENDED_CHANNEL else request.decision.channel
        channel = (request.resolution or {}).get("channel")
        return str(channel) if channel and request.status is RequestStatus.CANCELLED else None

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
    def changed(self) -> list[Change]:
        """What an edit changed, field by field (redacted args show only that they changed)."""
        request = self.request
        if request.status is not RequestStatus.EDITED or request.final_args is None:
            return []
        return redacted(changes(request.args, request.final_args), request.rule.redact)

    @property
    def confirm_text(self) -> str:
        """Why approving it from the keyboard asks once more (the rule's `confirm`)."""
        return "This call is marked destructive: it runs as soon as you approve it."

    @property
    def grant_minutes(self) -> int | None:
        """The standing grant the approve button offers ("+ like this for 30m"): 30 minutes, or
        the rule's `max_grant` if shorter; None where the rule allows no grant."""
        request = self.request
        limit = request.rule.max_grant
        if limit is None or request.rule.quorum > 1 or request.kind != "tool":
            return None
        minutes = min(DEFAULT_GRANT_MINUTES, int(limit.total_seconds() // 60))
        return minutes if minutes >= 1 else None

    @property
    def quorum_note(self) -> str | None:
        rule = self.request.rule
        if rule.quorum <= 1:
            return None
        return f"{len(self.request.approvals)} of {rule.quorum} approvals"


def pretty_json(value: Any) -> str:
    """A value as indented JSON, hidden characters written as JSON escapes."""
    return visible_json(value, indent=2)


def field_errors_of(error: SignoffError) -> Mapping[str, str]:
    """The per-field problems a refused form comes back with (none for other refusals)."""
    return error.fields if isinstance(error, FormProblem) else {}
