"""The words channels show, in English and Chinese (seed 004's cards and text fallback)."""

from __future__ import annotations

from typing import Literal, TypeAlias

Locale: TypeAlias = Literal["en", "zh"]
LOCALES: tuple[Locale, ...] = ("en", "zh")

TITLE: dict[Locale, str] = {"en": "AI wants to run: {tool}", "zh": "AI 想执行：{tool}"}
QUESTION: dict[Locale, str] = {"en": "The AI asks you", "zh": "AI 想问你"}
BUTTONS: dict[Locale, dict[str, str]] = {
    "en": {"approve": "✅ Approve", "edit": "✏️ Edit", "respond": "💬 Answer", "reject": "❌ Reject"},
    "zh": {"approve": "✅ 批准", "edit": "✏️ 编辑", "respond": "💬 回复", "reject": "❌ 拒绝"},
}
"""One label per decision, in the order cards show them (`Notice.decisions`)."""
GRANT_BUTTON: dict[Locale, str] = {
    "en": "✅ + like this for {minutes}m",
    "zh": "✅ 同类调用 {minutes} 分钟内批准",
}
"""The button that approves and gives a standing grant for calls like it (`Notice.grant_minutes`)."""
FINAL: dict[Locale, dict[str, str]] = {
    "en": {
        "approved": "✅ Approved",
        "edited": "✏️ Approved with changes",
        "rejected": "❌ Rejected",
        "responded": "💬 Answered",
        "expired": "⌛ Expired",
        "cancelled": "🚫 Cancelled",
    },
    "zh": {
        "approved": "✅ 已批准",
        "edited": "✏️ 已修改并批准",
        "rejected": "❌ 已拒绝",
        "responded": "💬 已回复",
        "expired": "⌛ 已过期",
        "cancelled": "🚫 已取消",
    },
}
BY: dict[Locale, str] = {"en": "{state} by {who}", "zh": "{state}（{who}）"}
VALID_FOR: dict[Locale, str] = {"en": "⚠️ Valid for {span}", "zh": "⚠️ {span}内有效"}
FOUR_EYES: dict[Locale, str] = {
    "en": "👀 Four eyes: {who} may not approve (they may reject)",
    "zh": "👀 四眼原则：{who} 不能批准（可以拒绝）",
}
"""Who a rule's `separation` keeps from approving, on every card of the request."""
FOUR_EYES_YOU: dict[Locale, str] = {
    "en": "👀 Four eyes: you may not approve this request; another approver must. You may reject it.",
    "zh": "👀 四眼原则：你不能批准这个请求，须由其他审批人批准；你可以拒绝。",
}
"""The same, on the card of a person it keeps out (their card offers only reject)."""
REMINDER: dict[Locale, str] = {
    "en": "⏰ Reminder: still waiting for your decision ({span} left)",
    "zh": "⏰ 提醒：仍在等待你的决定（剩余 {span}）",
}
EXPIRED_REPLY: dict[Locale, str] = {"en": "The request expired.", "zh": "请求已过期"}
REPLIES: dict[Locale, dict[str, str]] = {
    "en": {
        "not_linked": "Your account is not linked to signoff.",
        "nothing_pending": "There is no pending request to answer.",
        "nothing_decided": "Nothing was decided.",
        "no_such_request": "There is no such request.",
        "not_an_approver": "You are not an approver of this request.",
        "counted": "Your approval is counted ({count} of {quorum}).",
        "needs_code": (
            "{count} requests are waiting for you, so a reply must say which: add its code "
            "(1 {code} approves that one, 2 {code} rejects it). Nothing was decided."
        ),
        "unknown_code": "No request of yours here has the code {code}. Nothing was decided.",
        "approve": "Approved.",
        "edit": "Approved with your changes.",
        "reject": "Rejected.",
        "respond": "Answer sent.",
    },
    "zh": {
        "not_linked": "你的账号尚未关联 signoff。",
        "nothing_pending": "没有待你审批的请求。",
        "nothing_decided": "没有做出任何决策。",
        "no_such_request": "没有这个请求。",
        "not_an_approver": "你不是这个请求的审批人。",
        "counted": "已记下你的批准（{count}/{quorum}）。",
        "needs_code": (
            "有 {count} 个请求在等你，回复须带上编号（如 1 {code} 批准、2 {code} 拒绝）。未做任何决策。"
        ),
        "unknown_code": "你在这里没有编号为 {code} 的请求。未做任何决策。",
        "approve": "已批准。",
        "edit": "已按你的修改批准。",
        "reject": "已拒绝。",
        "respond": "回复已发送。",
    },
}
"""What a person is told right after answering on a chat channel (the platform's reply)."""
ALREADY_REPLY: dict[Locale, str] = {"zh": "该请求已处理：{state}。"}
"""The chat reply to a decision on a request that was already closed (`state`: its `FINAL`
words and who), where the inbox's English words (`refusal_text`) are not the channel's language."""
EXECUTION: dict[Locale, dict[str, str]] = {
    "en": {"succeeded": "✅ {tool} ran", "failed": "❌ {tool} failed"},
    "zh": {"succeeded": "✅ {tool} 已执行", "failed": "❌ {tool} 执行失败"},
}
RESULT: dict[Locale, str] = {"en": "Result: {result}", "zh": "结果：{result}"}


def span_words(seconds: float, locale: Locale) -> str:
    """A deadline's length as people read it: '24 hours' / '24 小时', '30 minutes' / '30 分钟',
    '3 days' / '3 天' (DESIGN §9's "Valid for 24 hours")."""
    seconds = max(0, round(seconds))
    if seconds < 120:
        count, en, zh = seconds, "second", "秒"
    elif seconds < 2 * 3600:
        count, en, zh = round(seconds / 60), "minute", "分钟"
    elif seconds < 72 * 3600:
        count, en, zh = round(seconds / 3600), "hour", "小时"
    else:
        count, en, zh = round(seconds / 86400), "day", "天"
    if locale == "zh":
        return f"{count} {zh}"
    return f"{count} {en}{'' if count == 1 else 's'}"


# -- the text fallback (chats without cards: seed 004's WeChat path) --------------------------

TEXT_WAITING: dict[Locale, str] = {"en": "🔔 Waiting for your decision", "zh": "🔔 等待你的决策"}
TEXT_QUESTION: dict[Locale, str] = {"en": "🔔 The AI asks you", "zh": "🔔 AI 想问你"}
TEXT_CODED = "{text} · {code}"
"""A text message's first line with its request's reply code."""
TEXT_ACTION: dict[Locale, str] = {"en": "📋 Action: {action}", "zh": "📋 操作：{action}"}
TEXT_TOOL: dict[Locale, str] = {"en": "🔧 Tool: {tool}", "zh": "🔧 工具：{tool}"}
TEXT_DETAILS: dict[Locale, str] = {"en": "Details:", "zh": "内容："}
TEXT_MORE_ARGS: dict[Locale, str] = {"en": "  …and {count} more", "zh": "  …还有 {count} 项"}
TEXT_REPLY_WITH: dict[Locale, str] = {"en": "Reply with one of:", "zh": "回复以下任一选项："}
TEXT_CHOICES: dict[Locale, dict[str, str]] = {
    "en": {"approve": "{reply}  ✅ Approve", "reject": "{reply}  ❌ Reject"},
    "zh": {"approve": "{reply}  ✅ 批准", "reject": "{reply}  ❌ 拒绝"},
}
"""The decisions a text reply can make, each with the reply that makes it (`TEXT_DIGITS`, and
the request's code when it has one: `1 K7QD`)."""
TEXT_DIGITS: dict[str, str] = {"approve": "1", "reject": "2"}
TEXT_LINK: dict[Locale, str] = {"en": "🔗 More options: {link}", "zh": "🔗 更多选项：{link}"}
TEXT_ONLY_LINK: dict[Locale, str] = {
    "en": "🔗 Answer here: {link}",
    "zh": "🔗 请在这里回复：{link}",
}
"""For a request a text reply cannot decide (a question, an edit-only rule)."""
TEXT_SAID: dict[Locale, str] = {"en": "💬 {said}", "zh": "💬 {said}"}
TEXT_HELP: dict[Locale, str] = {
    "en": (
        "Reply 1 (or approve, y, yes) to approve or 2 (or reject, n, no) to reject, with the code "
        "the request's message shows (1 K7QD); while only one request waits for you, 1 or 2 alone will do."
    ),
    "zh": (
        "回复 1（或 批准）批准、2（或 拒绝）拒绝，并带上请求消息里的编号（如 1 K7QD）；"
        "只有一个请求在等你时，只回 1 或 2 也可以。"
    ),
}
TEXT_DECIDED: dict[Locale, dict[str, str]] = {
    "en": {"approve": "✅ Approved: {action}", "reject": "❌ Rejected: {action}"},
    "zh": {"approve": "✅ 已批准：{action}", "reject": "❌ 已拒绝：{action}"},
}
TEXT_STILL_OPEN: dict[Locale, str] = {
    "en": "{count} more waiting for you:",
    "zh": "还有 {count} 个请求在等你：",
}
TEXT_OPEN: dict[Locale, str] = {"en": "Waiting for your decision:", "zh": "等你决策的请求："}
"""Above the list of a person's open requests (code, tool, first arguments) in an answer."""
TEXT_NOTHING_WAITING: dict[Locale, str] = {
    "en": "Nothing is waiting for your decision.",
    "zh": "没有等待你决策的请求。",
}
TEXT_EXPIRED: str = "请求已过期 / the request expired"
"""The reply to a reply that came after its request's deadline: in both languages, as seed 004
says it, since the person may have either set on the platform."""

# -- email -------------------------------------------------------------------------------------

MAIL_SUBJECT: dict[Locale, str] = {"en": "[signoff] {title}", "zh": "[signoff] {title}"}
MAIL_INTRO: dict[Locale, str] = {
    "en": "Your decision is needed. Nothing happens until you press a button on the page a link opens.",
    "zh": "需要你的决策。打开链接后，在页面上按下按钮才会生效。",
}
MAIL_QUESTION_INTRO: dict[Locale, str] = {
    "en": "The AI asks you. Open the link to answer.",
    "zh": "AI 想问你。打开链接回复。",
}
MAIL_ARGS: dict[Locale, str] = {"en": "Arguments", "zh": "参数"}
MAIL_TRUNCATED: dict[Locale, str] = {
    "en": "Long values are cut here; the page shows them whole.",
    "zh": "过长的内容在这里被截断；页面上显示全文。",
}
MAIL_LINK_NOTE: dict[Locale, str] = {
    "en": "The buttons open a page to confirm on. The link is yours alone; it stops working at the deadline.",
    "zh": "按钮会打开确认页面；链接只属于你，过期后失效。",
}
MAIL_SIGN_IN: dict[Locale, str] = {
    "en": "Sign in to decide: {url}",
    "zh": "登录后决策：{url}",
}
MAIL_REASON: dict[Locale, str] = {"en": "Reason", "zh": "理由"}
MAIL_RESULT: dict[Locale, str] = {"en": "Result", "zh": "结果"}
MAIL_ENDED: dict[Locale, str] = {
    "en": "This request is closed: there is nothing left to decide.",
    "zh": "该请求已结束，无需再决策。",
}
MAIL_FOOTER: dict[Locale, str] = {
    "en": "Sent by signoff, the approval layer for AI agents' tool calls.",
    "zh": "由 signoff（AI 工具调用的人工审批）发送。",
}
