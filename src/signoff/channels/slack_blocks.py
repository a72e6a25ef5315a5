"""What the Slack channel shows, as Block Kit (`slack_sdk.models`): a request's message while it
is open (title, description, the redacted args, one button per allowed decision and a link to
signoff), the same message in its final state (no live buttons), and the modals an edit, an
answer and a reject reason are typed into.

Every text a person or an agent wrote is escaped for mrkdwn (`&`, `<`, `>`), so an argument
cannot mention `@channel` or forge a link; texts are cut to Block Kit's limits.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    HeaderBlock,
    InputBlock,
    LinkButtonElement,
    MarkdownTextObject,
    PlainTextInputElement,
    SectionBlock,
)
from slack_sdk.models.views import View

from ..presentation import cut
from ..presentation.form_fields import FormField
from .buttons import GRANT
from .notice import Notice
from .texts import GRANT_BUTTON, Locale

ACTION_PREFIX = "signoff."
"""Our buttons' `action_id`s: `signoff.approve`, `signoff.edit`, …; their `value` is the request id."""
OPEN_ACTION = "signoff.open"
GRANT_ACTION = ACTION_PREFIX + GRANT
"""Approve and give a standing grant (`Notice.grant_minutes`); its `value` is `REQUEST_ID|MINUTES`."""
GRANT_SEPARATOR = "|"
BATCH_ACTION = ACTION_PREFIX + "approve_like"
"""Open the modal approving every open request like this one (`slack_batch`); `value`: the request id."""
BATCH_VIEW = "signoff.batch"
ACTIONS_BLOCK = "signoff.actions"
VALUE_ACTION = "value"
"""The `action_id` of every modal input (the block id names the field)."""
MESSAGE_BLOCK = "message"
COMMENT_BLOCK = "comment"
EDIT_VIEW, REJECT_VIEW, RESPOND_VIEW = "signoff.edit", "signoff.reject", "signoff.respond"
MODAL_DECISIONS = {"edit": EDIT_VIEW, "reject": REJECT_VIEW, "respond": RESPOND_VIEW}
"""Decisions whose button opens a modal first (approve decides at once)."""

HEADER_MAX, SECTION_MAX, FIELD_MAX, FIELDS_PER_SECTION, INITIAL_MAX = 150, 3000, 2000, 10, 3000
MAX_ARGS = 40
"""Arguments shown in a message (four sections of ten: Slack allows 50 blocks); the rest are on
the request's page, and the message says some are left out."""

WORDS: dict[Locale, dict[str, str]] = {
    "en": {
        "open": "Open in signoff",
        "cut": "Some values are cut or left out here; the request's page shows them all.",
        "requested": "Asked by {who}",
        "edit_title": "Edit the arguments",
        "edit_submit": "Approve with these",
        "reject_title": "Reject",
        "reject_submit": "Reject",
        "respond_title": "Answer",
        "respond_submit": "Send the answer",
        "cancel": "Cancel",
        "reason": "Reason (optional)",
        "comment": "Comment for the AI (optional)",
        "answer": "Your answer",
        "whole_args": "Arguments (JSON)",
        "json": "JSON",
        "hidden": "Hidden; leave it empty to keep the value",
        "reject_prompt": "Reject *{tool}*? The AI is told your reason.",
        "edit_prompt": "*{tool}* runs with what you save here.",
        "said": "“{said}”",
        "via": "via {channel}",
        "batch": "✅ All like this…",
    },
    "zh": {
        "open": "在 signoff 中打开",
        "cut": "部分内容已截断或省略，请在请求页面查看完整内容。",
        "requested": "发起人：{who}",
        "edit_title": "修改参数",
        "edit_submit": "按修改后批准",
        "reject_title": "拒绝",
        "reject_submit": "拒绝",
        "respond_title": "回复",
        "respond_submit": "发送回复",
        "cancel": "取消",
        "reason": "原因（可选）",
        "comment": "给 AI 的备注（可选）",
        "answer": "你的回复",
        "whole_args": "参数（JSON）",
        "json": "JSON",
        "hidden": "已隐藏；留空则保留原值",
        "reject_prompt": "拒绝 *{tool}*？AI 会收到你的原因。",
        "edit_prompt": "*{tool}* 将按这里保存的参数执行。",
        "said": "“{said}”",
        "via": "来自 {channel}",
        "batch": "✅ 批准所有同类…",
    },
}


def escape(text: str) -> str:
    """`text` as mrkdwn shows it literally (Slack's three escapes)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def fallback_text(notice: Notice) -> str:
    """The message's `text` (notifications, screen readers): title, then the outcome or the
    description; escaped too, as Slack reads it as mrkdwn (`<!channel>` would notify)."""
    said = notice.final.text if notice.final is not None else notice.description
    return cut(escape(f"{notice.title}: {said}"), SECTION_MAX)


def message_blocks(notice: Notice) -> list[Block]:
    """The message for `notice`: live buttons while it is open, its final state once it ended."""
    words = WORDS[notice.locale]
    blocks: list[Block] = [HeaderBlock(text=cut(notice.title, HEADER_MAX))]
    if notice.description:
        blocks.append(
            SectionBlock(text=MarkdownTextObject(text=cut(escape(notice.description), SECTION_MAX)))
        )
    blocks.extend(_arg_sections(notice.arg_rows[:MAX_ARGS]))
    if notice.truncated or len(notice.arg_rows) > MAX_ARGS:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=words["cut"])]))
    if notice.final is None:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=escape(_context(notice)))]))
        blocks.append(ActionsBlock(block_id=ACTIONS_BLOCK, elements=_buttons(notice)))
    else:
        blocks.extend(_final(notice))
    return blocks


def _arg_sections(rows: Sequence[tuple[str, str]]) -> list[Block]:
    fields = [
        MarkdownTextObject(text=cut(f"*{escape(name)}*\n{escape(text)}", FIELD_MAX)) for name, text in rows
    ]
    return [
        SectionBlock(fields=fields[start : start + FIELDS_PER_SECTION])
        for start in range(0, len(fields), FIELDS_PER_SECTION)
    ]


def _context(notice: Notice) -> str:
    parts = [notice.valid_for]
    if notice.requester:
        parts.append(WORDS[notice.locale]["requested"].format(who=notice.requester))
    if notice.four_eyes:
        parts.append(notice.four_eyes)
    return " · ".join(parts)


def _buttons(notice: Notice) -> list[ButtonElement]:
    buttons = []
    for decision in notice.decisions:
        style = {"approve": "primary", "reject": "danger"}.get(decision)
        buttons.append(
            ButtonElement(
                text=notice.buttons[decision],
                action_id=ACTION_PREFIX + decision,
                value=notice.request_id,
                style=style,
            )
        )
        if decision == "approve" and notice.grant_minutes:
            buttons.append(
                ButtonElement(
                    text=GRANT_BUTTON[notice.locale].format(minutes=notice.grant_minutes),
                    action_id=GRANT_ACTION,
                    value=f"{notice.request_id}{GRANT_SEPARATOR}{notice.grant_minutes}",
                )
            )
        if decision == "approve" and notice.batch_like:
            buttons.append(
                ButtonElement(
                    text=WORDS[notice.locale]["batch"], action_id=BATCH_ACTION, value=notice.request_id
                )
            )
    buttons.append(
        LinkButtonElement(
            text=WORDS[notice.locale]["open"], url=notice.link or notice.request_url, action_id=OPEN_ACTION
        )
    )
    return buttons


def _final(notice: Notice) -> list[Block]:
    assert notice.final is not None
    words = WORDS[notice.locale]
    final = notice.final
    text = f"*{escape(final.text)}*"
    if final.said:
        text += "\n" + escape(words["said"].format(said=cut(final.said, SECTION_MAX // 2)))
    blocks: list[Block] = [SectionBlock(text=MarkdownTextObject(text=cut(text, SECTION_MAX)))]
    details = []
    if final.channel:
        details.append(escape(words["via"].format(channel=final.channel)))
    if final.at is not None:
        details.append(
            f"<!date^{int(final.at.timestamp())}^{{date_short_pretty}} {{time}}|{final.at.isoformat()}>"
        )
    if notice.request_url:
        details.append(f"<{notice.request_url}|{escape(words['open'])}>")
    blocks.append(ContextBlock(elements=[MarkdownTextObject(text=" · ".join(details))]))
    return blocks


# -- modals -----------------------------------------------------------------------------------


def metadata(request_id: str, ref: dict[str, Any]) -> str:
    """A modal's `private_metadata`: which request it decides, and the message it came from."""
    return json.dumps({"request_id": request_id, "channel": ref.get("channel"), "ts": ref.get("ts")})


def reject_view(*, tool: str, request_id: str, ref: dict[str, Any], locale: Locale) -> View:
    words = WORDS[locale]
    return View(
        type="modal",
        callback_id=REJECT_VIEW,
        title=words["reject_title"],
        submit=words["reject_submit"],
        close=words["cancel"],
        private_metadata=metadata(request_id, ref),
        blocks=[
            SectionBlock(text=MarkdownTextObject(text=words["reject_prompt"].format(tool=escape(tool)))),
            text_input(MESSAGE_BLOCK, words["reason"], multiline=True, optional=True),
        ],
    )


def form_view(
    decision: str,
    fields: Sequence[FormField],
    *,
    tool: str,
    request_id: str,
    ref: dict[str, Any],
    locale: Locale,
    errors: dict[str, str] | None = None,
) -> View:
    """The edit (or answer) modal: one input per form field, then an optional comment (edit)."""
    words = WORDS[locale]
    blocks: list[Block] = []
    if decision == "edit":
        blocks.append(
            SectionBlock(text=MarkdownTextObject(text=words["edit_prompt"].format(tool=escape(tool))))
        )
    for field in fields:
        if field.key is None:  # one field for the whole value: its label in the modal's language
            field = replace(field, label=words["whole_args"] if decision == "edit" else words["answer"])
        blocks.append(field_input(field, locale))
    if decision == "respond" and not fields:
        blocks.append(text_input(MESSAGE_BLOCK, words["answer"], multiline=True))
    if decision == "edit":
        blocks.append(text_input(COMMENT_BLOCK, words["comment"], multiline=True, optional=True))
    return View(
        type="modal",
        callback_id=MODAL_DECISIONS[decision],
        title=words[f"{decision}_title"],
        submit=words[f"{decision}_submit"],
        close=words["cancel"],
        private_metadata=metadata(request_id, ref),
        blocks=blocks,
    )


def field_input(field: FormField, locale: Locale) -> InputBlock:
    """One form field as a modal input: text as it is, anything else as JSON (see `slack_fields`)."""
    words = WORDS[locale]
    hints = [field.hint] if field.hint else []
    if field.hidden_value:
        hints.append(words["hidden"])
    if field.kind not in ("text", "textarea"):
        hints.append(words["json"])
    return text_input(
        field.name,
        cut(field.label, 2000),
        initial=field.raw,
        multiline=field.kind in ("textarea", "json"),
        optional=not field.required or field.hidden_value,
        hint=cut(" · ".join(hints), 2000) or None,
    )


def text_input(
    block_id: str,
    label: str,
    *,
    initial: str = "",
    multiline: bool = False,
    optional: bool = False,
    hint: str | None = None,
) -> InputBlock:
    element = PlainTextInputElement(
        action_id=VALUE_ACTION,
        initial_value=initial if initial and len(initial) <= INITIAL_MAX else None,
        multiline=multiline,
    )
    return InputBlock(block_id=block_id, label=label, element=element, optional=optional, hint=hint)


def submitted_values(view: dict[str, Any]) -> dict[str, str]:
    """A submitted modal's inputs, block id → text ('' for an input left empty)."""
    values = (view.get("state") or {}).get("values") or {}
    if not isinstance(values, dict):
        return {}
    read: dict[str, str] = {}
    for block_id, actions in values.items():
        if isinstance(actions, dict) and isinstance(actions.get(VALUE_ACTION), dict):
            value = actions[VALUE_ACTION].get("value")
            read[str(block_id)] = value if isinstance(value, str) else ""
    return read
