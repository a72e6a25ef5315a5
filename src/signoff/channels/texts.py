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
EXPIRED_REPLY: dict[Locale, str] = {"en": "The request expired.", "zh": "请求已过期"}
EXECUTION: dict[Locale, dict[str, str]] = {
    "en": {"succeeded": "✅ {tool} ran", "failed": "❌ {tool} failed"},
    "zh": {"succeeded": "✅ {tool} 已执行", "failed": "❌ {tool} 执行失败"},
}


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
