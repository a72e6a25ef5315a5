"""What channels render: a request's `Notice` (while it is open, and once it has ended) and a
`FollowUp` after it ran. Built from the request the way the inbox's cards show it (`Card`:
redacted args, long values cut, only the decisions the rule allows, how it ended), so a chat
card never shows more than the inbox would.

Every text in them that came from the agent, the tool or a person (tool name, description,
arguments, who, the words said, the result) is already passed through `visible`: characters a
person cannot see (a bidi override, a zero-width space, a control character) are written as
escapes, line breaks kept, so no channel can render them raw."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .. import Execution, ExecutionStatus, Request
from ..presentation import cut, redacted_result, visible
from ..presentation.cards import Card
from .texts import (
    BUTTONS,
    BY,
    EXECUTION,
    FINAL,
    FOUR_EYES,
    FOUR_EYES_YOU,
    QUESTION,
    REMINDER,
    RESULT,
    TITLE,
    VALID_FOR,
    Locale,
    span_words,
)

RESULT_CHARS = 500
"""Characters of a tool's result a follow-up shows (the request's page shows it whole)."""


@dataclass(frozen=True, kw_only=True)
class FinalState:
    """How a request ended: `status` (approved, edited, rejected, responded, expired,
    cancelled), by whom (`actor`, None for expiry), on which channel, and the words said."""

    status: str
    actor: str | None
    channel: str | None
    said: str | None
    at: datetime | None
    text: str
    """In the notice's language: '✅ Approved by alice', '⌛ 已过期'."""


@dataclass(frozen=True, kw_only=True)
class Notice:
    """One request as one person is shown it on one channel."""

    request_id: str
    thread_id: str
    kind: str
    """`tool` (a call to approve) or `input` (a question: `gate.ask`)."""
    tool: str
    title: str
    """'AI wants to run: send_email' / 'AI 想执行：send_email' (a question: 'The AI asks you')."""
    description: str
    args: dict[str, Any]
    """The redacted args, long values cut (`truncated` then says so)."""
    arg_rows: list[tuple[str, str]]
    """(name, value as text) per shown argument: text as it is, anything else as JSON."""
    truncated: bool
    decisions: tuple[str, ...]
    """The decisions the rule allows, in button order (approve, edit, respond, reject)."""
    buttons: dict[str, str]
    """A label per allowed decision, in the notice's language."""
    args_schema: dict[str, Any] | None
    """For an edit form (a Slack modal): the tool's JSON Schema."""
    answer_schema: dict[str, Any] | None
    deadline: datetime
    valid_for: str
    """'⚠️ Valid for 24 hours' / '⚠️ 24 小时内有效', from when the notice was made."""
    approver: str | None
    """The signoff user this notice is for (None for a channel that is not a person's)."""
    link: str | None
    """A handle link opening this request's card for `approver` without signing in (expiring;
    GET shows it, only a POST decides); None where no person is named."""
    request_url: str
    """The request's page in the inbox (needs signing in)."""
    agent: str | None
    requester: str | None
    locale: Locale
    final: FinalState | None = None
    """How the request ended; None while it is open (then the buttons are live)."""
    code: str | None = None
    """The request's reply code for this person on a channel that needs one (`Channel.reply_codes`)."""
    four_eyes: str | None = None
    """Who the rule's four eyes keep from approving ('👀 Four eyes: carol may not approve …'), or
    that `approver` is one of them (their notice then offers only reject); None without separation."""
    grant_minutes: int | None = None
    """The standing grant its approve may give ("+ like this for 30m"), where its rule allows one."""
    batch_like: bool = False
    """Its approve may approve the open requests like it too, in one batch (Slack's "All like
    this…"): its rule allows batches and approving."""
    reminder: str | None = None
    """For a reminder (`Channel.remind`): the line it leads with, '⏰ Reminder: still waiting for
    your decision (2 hours left)'; None for the first notice."""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def open(self) -> bool:
        return self.final is None


@dataclass(frozen=True, kw_only=True)
class FollowUp:
    """A message after the notice: the execution's result (seed 004's follow-up message)."""

    request_id: str
    tool: str
    status: str
    """The execution's status: succeeded, failed (or in_doubt)."""
    text: str
    """The whole message: `headline`, then 'Result: …' when there is a result."""
    locale: Locale
    headline: str = ""
    """'✅ send_email ran' / '❌ send_email 执行失败', with the error when it failed."""
    result: str | None = None
    """The tool's result as text: redacted as the rule's `redact` says, cut to `RESULT_CHARS`."""


def build_notice(
    request: Request,
    *,
    approver: str | None,
    link: str | None,
    request_url: str,
    locale: Locale = "en",
    now: datetime | None = None,
    code: str | None = None,
    reminder: bool = False,
) -> Notice:
    """The notice for `request` as `approver` sees it; ended requests carry their `final` state.
    `reminder`: it reminds the approver (at `now`) of a request still open."""
    card = Card(request=request, mode="link", details_link=False)
    tool = visible(request.tool_name)
    seconds = (request.deadline - (now or request.created_at)).total_seconds()
    separated = approver is not None and approver in request.rule.separated
    decisions = tuple(kind for kind in card.actions if kind == "reject") if separated else card.actions
    return Notice(
        request_id=request.id,
        thread_id=request.thread_id,
        kind=request.kind,
        tool=tool,
        title=QUESTION[locale] if request.kind == "input" else TITLE[locale].format(tool=tool),
        description=visible(card.description_text, newlines=True),
        args=request.shown_args(),
        arg_rows=[(visible(name), visible(value, newlines=True)) for name, value in card.arg_rows],
        truncated=card.truncated,
        decisions=decisions,
        buttons={kind: BUTTONS[locale][kind] for kind in decisions},
        args_schema=request.args_schema,
        answer_schema=request.answer_schema,
        deadline=request.deadline,
        valid_for=VALID_FOR[locale].format(span=span_words(seconds, locale)),
        approver=approver,
        link=link,
        request_url=request_url,
        agent=_shown(request.agent),
        requester=_shown(request.requester),
        locale=locale,
        final=final_state(request, locale) if request.is_terminal else None,
        code=code,
        four_eyes=_four_eyes(request, separated, locale),
        grant_minutes=card.grant_minutes if "approve" in card.actions else None,
        batch_like="approve" in decisions and request.rule.batch and not request.is_terminal,
        reminder=REMINDER[locale].format(span=span_words(seconds, locale)) if reminder else None,
    )


def _four_eyes(request: Request, separated: bool, locale: Locale) -> str | None:
    if request.rule.separation is None:
        return None
    if separated:
        return FOUR_EYES_YOU[locale]
    who = ", ".join(request.rule.separated) or request.rule.separation
    return FOUR_EYES[locale].format(who=visible(who))


def _shown(text: str | None) -> str | None:
    return visible(text) if text is not None else None


def final_state(request: Request, locale: Locale = "en") -> FinalState:
    """How an ended request ended, in `locale`'s words."""
    card = Card(request=request, mode="link", details_link=False)
    status = request.status.value
    resolution = request.resolution or {}
    actor: str | None = None
    channel: str | None = None
    if request.decision is not None:
        actor, channel = request.decision.actor, request.decision.channel
    elif status == "cancelled":
        actor, channel = resolution.get("actor"), resolution.get("channel")
    state = FINAL[locale][status]
    text = BY[locale].format(state=state, who=visible(actor)) if actor else state
    said = card.said
    return FinalState(
        status=status,
        actor=actor,
        channel=channel,
        said=visible(said, newlines=True) if said is not None else None,
        at=request.decided_at or request.updated_at,
        text=text,
    )


def build_follow_up(request: Request, execution: Execution, locale: Locale = "en") -> FollowUp:
    """The message after the tool ran: what became of it and, when it succeeded, its result
    (seed 004's follow-up), redacted by the rule and cut to `RESULT_CHARS`."""
    status = execution.status.value
    tool = visible(request.tool_name)
    headline = EXECUTION[locale].get(status, "{tool}: " + status).format(tool=tool)
    if execution.error:
        headline = f"{headline}: {cut(visible(execution.error, newlines=True), RESULT_CHARS)}"
    result = None
    if execution.status is ExecutionStatus.SUCCEEDED and execution.result is not None:
        result = result_text(execution.result, request)
    text = headline if result is None else f"{headline}\n{RESULT[locale].format(result=result)}"
    return FollowUp(
        request_id=request.id,
        tool=tool,
        status=status,
        text=text,
        locale=locale,
        headline=headline,
        result=result,
    )


def result_text(result: Any, request: Request, limit: int = RESULT_CHARS) -> str:
    """A tool's result as a person may be shown it (`redacted_result`), at most `limit` characters."""
    return cut(redacted_result(result, request.rule.redact, request.args), limit)
