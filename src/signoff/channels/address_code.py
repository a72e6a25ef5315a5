"""The one-time code that proves a channel address is a person's (DESIGN §9): what a channel is
given to send (`AddressCode`, rendered each channel's own way by `Channel.send_code`), its words
in English and Chinese, and the answer to a callback from an address nobody has verified."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from .texts import Locale, span_words

CODE_TITLE: dict[Locale, str] = {"en": "signoff verification code", "zh": "signoff 验证码"}
CODE_TEXT: dict[Locale, str] = {
    "en": (
        "Your signoff verification code is {code}\n"
        "Enter it on signoff's Settings page to link this address to the signoff user {user}. "
        "It works once, for {span}; a newer code replaces it.\n"
        "If you did not ask for it, ignore this message: nothing is linked without the code."
    ),
    "zh": (
        "你的 signoff 验证码是 {code}\n"
        "请在 signoff 的设置页面输入它，把这个地址关联到 signoff 用户 {user}。"
        "只能使用一次，{span}内有效；新的验证码会取代它。\n"
        "如果不是你本人操作，请忽略此消息：没有验证码，什么都不会被关联。"
    ),
}
NOT_VERIFIED_REPLY: dict[Locale, str] = {
    "en": "This address is not verified for any signoff user.",
    "zh": "这个地址还没有被任何 signoff 用户验证。",
}
"""The answer to a callback from an address someone claims but has not verified: it decides nothing."""


@dataclass(frozen=True, kw_only=True)
class AddressCode:
    """A verification code for the person who claims an address."""

    code: str
    user: str
    """The signoff user who claims the address."""
    address: str
    expires_at: datetime
    id: str
    """One per code (a message id made from it is never a repeat of an earlier code's)."""
    locale: Locale
    title: str
    text: str
    """The whole message as plain text, in the channel's language."""


def build_address_code(
    *, code: str, user: str, address: str, expires_at: datetime, id: str, locale: Locale
) -> AddressCode:
    span = span_words((expires_at - datetime.now(UTC)).total_seconds(), locale)
    return AddressCode(
        code=code,
        user=user,
        address=address,
        expires_at=expires_at,
        id=id,
        locale=locale,
        title=CODE_TITLE[locale],
        text=CODE_TEXT[locale].format(code=code, user=user, span=span),
    )
