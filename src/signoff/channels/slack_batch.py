"""Approving, from one Slack message, every open request like it in one batch ("✅ Approve all
like this…"): the open requests of the same tool in the same thread that the clicker may decide
and whose rule allows batches (`batch`, not `false`).

The button opens a modal naming how many and which (at most `MAX_LISTED` of them, oldest first,
their ids kept in the modal); its submit decides exactly those, through `decide_batch_as`, as
the inbox's and the API's batches do: each request decided and audited on its own with every
check of a single decision; one refused (no longer open, four eyes, not theirs, its rule says
`batch: false`) is skipped and named. The modal then says what was decided and skipped.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from slack_sdk.models.blocks import Block, ContextBlock, MarkdownTextObject, SectionBlock
from slack_sdk.models.views import View

from .. import BatchResult, Request, batch_decision, check_batch_ids
from ..errors import SignoffError
from ..presentation import cut
from .contract import Inbound
from .slack_blocks import BATCH_VIEW, MESSAGE_BLOCK, SECTION_MAX, escape, text_input
from .texts import Locale

if TYPE_CHECKING:
    from .slack import SlackChannel

MAX_LISTED = 50
"""The most requests one modal approves (their ids travel in its `private_metadata`, which Slack
caps at 3,000 characters); more are left for the next batch, and the modal says so. The server
lists them (`server.channel_batch.batch_candidates`)."""
SHOWN = 10
"""Requests the modal lists by name; the rest are counted."""

WORDS: dict[Locale, dict[str, str]] = {
    "en": {
        "title": "Approve all like this",
        "submit": "Approve {count}",
        "cancel": "Cancel",
        "done": "Done",
        "prompt": "Approve *{count}* open *{tool}* request(s) of thread `{thread}` that you may decide?",
        "more": "… and {count} more",
        "capped": "Only the oldest {count} are approved here; decide the rest after.",
        "none": "No open request like this is yours to decide now.",
        "reason": "Reason (optional; each request records it)",
        "decided": "Approved {count} request(s).",
        "skipped": "Skipped {count}:",
    },
    "zh": {
        "title": "批准所有同类请求",
        "submit": "批准 {count} 个",
        "cancel": "取消",
        "done": "完成",
        "prompt": "批准线程 `{thread}` 中你可以决定的 *{count}* 个待处理 *{tool}* 请求？",
        "more": "…… 另有 {count} 个",
        "capped": "这里只批准最早的 {count} 个，其余的请稍后再处理。",
        "none": "现在没有你可以决定的同类待处理请求。",
        "reason": "原因（可选，每个请求都会记录）",
        "decided": "已批准 {count} 个请求。",
        "skipped": "跳过 {count} 个：",
    },
}


def batch_view(
    requests: list[Request], total: int, *, request: Request, ref: dict[str, Any], locale: Locale
) -> View:
    """The modal asking to approve `requests` (of `total` like `request`)."""
    words = WORDS[locale]
    count = len(requests)
    if not requests:
        blocks: list[Block] = [SectionBlock(text=MarkdownTextObject(text=words["none"]))]
        return View(
            type="modal", callback_id=BATCH_VIEW, title=words["title"], close=words["done"], blocks=blocks
        )
    prompt = words["prompt"].format(
        count=count, tool=escape(request.tool_name), thread=escape(request.thread_id).replace("`", "'")
    )
    lines = [f"• {escape(cut(item.description or item.tool_name, 120))}" for item in requests[:SHOWN]]
    if count > SHOWN:
        lines.append(words["more"].format(count=count - SHOWN))
    blocks = [
        SectionBlock(text=MarkdownTextObject(text=prompt)),
        SectionBlock(text=MarkdownTextObject(text=cut("\n".join(lines), SECTION_MAX))),
    ]
    if total > count:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=words["capped"].format(count=count))]))
    blocks.append(text_input(MESSAGE_BLOCK, words["reason"], multiline=True, optional=True))
    metadata = {
        "request_id": request.id,
        "ids": [item.id for item in requests],
        "channel": ref.get("channel"),
        "ts": ref.get("ts"),
    }
    return View(
        type="modal",
        callback_id=BATCH_VIEW,
        title=words["title"],
        submit=words["submit"].format(count=count),
        close=words["cancel"],
        private_metadata=json.dumps(metadata),
        blocks=blocks,
    )


def result_view(result: BatchResult, locale: Locale) -> View:
    """What the batch did, shown in place of the modal that asked for it."""
    words = WORDS[locale]
    lines = [words["decided"].format(count=len(result.decided))]
    if result.skipped:
        lines.append(words["skipped"].format(count=len(result.skipped)))
        lines.extend(
            f"• `{skip.request_id}`: {escape(cut(skip.reason, 200))}" for skip in result.skipped[:SHOWN]
        )
        if len(result.skipped) > SHOWN:
            lines.append(words["more"].format(count=len(result.skipped) - SHOWN))
    text = cut("\n".join(lines), SECTION_MAX)
    return View(
        type="modal",
        title=words["title"],
        close=words["done"],
        blocks=[SectionBlock(text=MarkdownTextObject(text=text))],
    )


def modal_for(
    candidates: list[Request], total: int, channel: SlackChannel, inbound: Inbound, request: Request
) -> View:
    """The batch modal for the clicker of `inbound`: `candidates` are the requests like `request`
    they may decide in a batch (`batch.open_like`, of `total`)."""
    ref = {"channel": inbound.extra.get("slack_channel"), "ts": inbound.extra.get("ts")}
    return batch_view(candidates, total, request=request, ref=ref, locale=channel.locale)


def read_submission(inbound: Inbound, locale: Locale) -> tuple[tuple[str, ...], Any] | str:
    """The ids the submitted modal lists and the one approval it gives them; or why it cannot be
    read (shown next to its reason)."""
    try:
        ids = check_batch_ids(inbound.extra.get("ids"))
        decision = batch_decision("approve", (inbound.extra.get("values") or {}).get(MESSAGE_BLOCK))
    except SignoffError as exc:
        return exc.message
    return ids, decision
