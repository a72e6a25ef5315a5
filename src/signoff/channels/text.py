"""`text`: the fallback for chats without cards (seed 004's WeChat path, DESIGN §9).

A request is sent as a plain message, in Chinese or English, carrying the request's reply code
(`Notice.code`: short, random, kept for the request; see `store.reply_code_ops`):

    🔔 Waiting for your decision · K7QD

    📋 Action: Delete old users
    🔧 Tool: run_sql
    Details:
      sql: DROP TABLE users WHERE id < 1000

    Reply with one of:
      1 K7QD  ✅ Approve
      2 K7QD  ❌ Reject

    ⚠️ Valid for 24 hours

and the person answers by replying: `1`, `批准`, `approve`, `y`, `yes` approve; `2`, `拒绝`,
`reject`, `n`, `no` reject (trimmed, any case, full-width digits too; `2 <reason>` rejects with
a reason), with the code (`1 K7QD`, `K7QD 1`, `批准 k7qd`). A reply with a code decides that
request; one without decides only when a single request is open for that person on this
channel; otherwise nothing is decided and the answer lists the open ones with their codes
(`server.reply_picking`). Anything else gets a short help text back.

The platform is reached through a bridge with a small HTTP API (one channel per platform,
`platform: wechat` → people's addresses of kind `text:wechat`):

- out: `POST {send_url}` (a public destination unless the server allows private ones: see
  `signoff.destinations`) with the JSON `{"to": <address>, "text": <message>, "request_id": ...,
  "message": "notice" | "update" | "follow_up" | "remind"}`, signed per Standard Webhooks with `secret`
  (`webhook-id`, the same for every retry of one message, `webhook-timestamp`,
  `webhook-signature`), and `Authorization: Bearer {send_token}` when one is configured. A 2xx
  answer delivers it (`{"message_id": ...}` in it is kept, if given); 408, 429 and 5xx are tried
  again (after `Retry-After`), any other 4xx is not.
- in: the bridge POSTs each reply to `/channels/{name}/callback` as `{"from": <address>,
  "text": <what they wrote>}`, signed the same way with the same secret (stale or unsigned: 401;
  `webhook-id` is the idempotency key, so a reply delivered twice decides once). The answer is
  `{"ok": bool, "to": <address>, "reply": <text to send back to the person>}`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import httpx
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from ..destinations import Destinations, PrivateDestination
from ..destinations.guarded_httpx import checked_client
from ..destinations.masking import masked_in
from ..errors import ConfigError, InvalidInput
from ..identity import TEXT_KIND
from ..presentation import visible
from .address_code import AddressCode
from .contract import (
    BadCallback,
    BadSignature,
    Channel,
    DeliveryError,
    Inbound,
    InboundOutcome,
    MessageRef,
    reminder_key,
    retry_after_seconds,
)
from .freshness import check_fresh
from .notice import FollowUp, Notice
from .registry import ChannelConfig
from .text_replies import Recent, one_line, parse_reply
from .texts import (
    TEXT_ACTION,
    TEXT_CHOICES,
    TEXT_CODED,
    TEXT_DETAILS,
    TEXT_DIGITS,
    TEXT_HELP,
    TEXT_LINK,
    TEXT_MORE_ARGS,
    TEXT_ONLY_LINK,
    TEXT_QUESTION,
    TEXT_REPLY_WITH,
    TEXT_SAID,
    TEXT_TOOL,
    TEXT_WAITING,
    Locale,
)

REPLY_DECISIONS = ("approve", "reject")
"""The decisions a text reply can make (edits and answers need the link)."""
MAX_ROWS = 10
"""Arguments a text message lists (chat messages are short; the link's page shows them all)."""
MAX_VALUE = 300
"""Characters of one argument's value a text message shows (the rest: '…')."""
USER_AGENT = "signoff-text/1"


def notice_text(notice: Notice) -> str:
    """The message of an open request (DESIGN §9's text), in the notice's language."""
    locale = notice.locale
    lines = [
        _coded(TEXT_QUESTION[locale] if notice.kind == "input" else TEXT_WAITING[locale], notice.code),
        "",
    ]
    lines.append(TEXT_ACTION[locale].format(action=_action(notice)))
    if notice.kind != "input":
        lines.append(TEXT_TOOL[locale].format(tool=notice.tool))
    if notice.arg_rows:
        lines.append(TEXT_DETAILS[locale])
        lines.extend(f"  {name}: {_cut(value)}" for name, value in notice.arg_rows[:MAX_ROWS])
        if len(notice.arg_rows) > MAX_ROWS:
            lines.append(TEXT_MORE_ARGS[locale].format(count=len(notice.arg_rows) - MAX_ROWS))
    choices = [kind for kind in REPLY_DECISIONS if kind in notice.decisions]
    lines.append("")
    if choices:
        lines.append(TEXT_REPLY_WITH[locale])
        for kind in choices:
            reply = _coded(TEXT_DIGITS[kind], notice.code, joint=" ")
            lines.append(f"  {TEXT_CHOICES[locale][kind].format(reply=reply)}")
        if notice.link and any(kind not in REPLY_DECISIONS for kind in notice.decisions):
            lines.extend(["", TEXT_LINK[locale].format(link=notice.link)])
    else:
        lines.append(TEXT_ONLY_LINK[locale].format(link=notice.link or notice.request_url))
    if notice.four_eyes:
        lines.extend(["", notice.four_eyes])
    lines.extend(["", notice.valid_for])
    return "\n".join(lines)


def final_text(notice: Notice) -> str:
    """The message saying how a request ended: '✅ Approved by alice' and what it was."""
    assert notice.final is not None, "final_text is for ended requests"
    lines = [
        _coded(notice.final.text, notice.code),
        TEXT_ACTION[notice.locale].format(action=_action(notice)),
    ]
    if notice.final.said:
        lines.append(TEXT_SAID[notice.locale].format(said=_cut(notice.final.said)))
    return "\n".join(lines)


def follow_up_text(message: FollowUp, code: str | None) -> str:
    """The message after the tool ran (what became of it, its result), with the request's code."""
    first, newline, rest = message.text.partition("\n")
    return _coded(first, code) + newline + rest


def _coded(text: str, code: str | None, *, joint: str | None = None) -> str:
    if code is None:
        return text
    return f"{text}{joint}{code}" if joint is not None else TEXT_CODED.format(text=text, code=code)


def _action(notice: Notice) -> str:
    return visible(notice.description.strip(), newlines=True) or notice.title


def _cut(value: str) -> str:
    return one_line(value, MAX_VALUE)


class TextChannel(Channel):
    kind = "text"
    reply_codes = True

    def __init__(
        self,
        name: str,
        *,
        platform: str,
        send_url: str,
        secret: str,
        send_token: str | None = None,
        locale: Locale = "en",
        destinations: Destinations | None = None,
    ) -> None:
        super().__init__(name)
        if not TEXT_KIND.match(f"text:{platform}"):
            raise ConfigError(
                f"channel {name!r}: platform is a short lower-case name like 'wechat', not {platform!r}"
            )
        self.platform = platform
        self.destinations = destinations or Destinations()
        try:
            self.send_url = self.destinations.check_url(send_url, what="send_url")
        except InvalidInput as exc:
            raise ConfigError(f"channel {name!r}: {exc.message}") from None
        try:
            self._signer = Webhook(secret)
        except Exception:
            raise ConfigError(
                f"channel {name!r}: secret must be a Standard Webhooks secret ('whsec_' + base64)"
            ) from None
        self._token = send_token
        self.locale: Locale = locale
        self._http: httpx.AsyncClient | None = None
        self.recent = Recent()
        """What this process sent and answered (see `text_replies.Recent`)."""

    @classmethod
    def from_config(cls, config: ChannelConfig) -> TextChannel:
        token = config.secret("send_token") if config.setting("send_token") else None
        return cls(
            config.name,
            platform=str(config.required("platform")),
            send_url=str(config.required("send_url")),
            secret=config.secret("secret"),
            send_token=token,
            locale=config.locale,
            destinations=config.destinations,
        )

    @property
    def address_kind(self) -> str:
        return f"text:{self.platform}"

    # -- out ---------------------------------------------------------------------------------

    async def send(self, notice: Notice, target: str) -> MessageRef:
        if notice.final is not None:
            return await self._post(target, final_text(notice), notice.request_id, "notice")
        ref = await self._post(target, notice_text(notice), notice.request_id, "notice")
        self.recent.sent(target, notice.request_id, _action(notice), notice.deadline)
        if notice.code is not None:  # the update and the follow-up name the request by it too
            ref["code"] = notice.code
        return ref

    async def update(self, notice: Notice, target: str, ref: MessageRef) -> MessageRef | None:
        if notice.final is None:
            return None
        self.recent.ended(target, notice.request_id, notice.final.status)
        notice = replace(notice, code=notice.code or _code_in(ref))
        return await self._post(target, final_text(notice), notice.request_id, "update")

    async def follow_up(self, message: FollowUp, target: str, ref: MessageRef) -> MessageRef | None:
        text = follow_up_text(message, _code_in(ref))
        return await self._post(target, text, message.request_id, "follow_up")

    async def remind(self, notice: Notice, target: str, ref: MessageRef) -> MessageRef | None:
        """The open request's message again, led by the reminder, with its code (`"message": "remind"`)."""
        notice = replace(notice, code=notice.code or _code_in(ref))
        text = f"{notice.reminder}\n{notice_text(notice)}"
        msg_id = self.message_id(notice.request_id, target, f"remind_{reminder_key(notice)}")
        return await self._post(target, text, notice.request_id, "remind", msg_id=msg_id)

    async def send_code(self, message: AddressCode, target: str) -> MessageRef:
        """The code, as a text (`"message": "code"`, about no request: `"request_id": null`)."""
        msg_id = self.message_id(f"code_{message.id}", target, "code")
        return await self._post(target, message.text, None, "code", msg_id=msg_id)

    def message_id(self, request_id: str, target: str, message: str) -> str:
        """The `webhook-id` of one message: the same on every retry, so a bridge can drop repeats."""
        person = hashlib.sha256(f"{self.platform}:{target}".encode()).hexdigest()[:12]
        return f"msg_{request_id.removeprefix('req_')}_{person}_{message}"

    def signed_headers(self, msg_id: str, body: str, now: datetime | None = None) -> dict[str, str]:
        moment = (now or datetime.now(UTC)).astimezone(UTC)
        headers = {
            "content-type": "application/json",
            "user-agent": USER_AGENT,
            "webhook-id": msg_id,
            "webhook-timestamp": str(int(moment.timestamp())),
            "webhook-signature": self._signer.sign(msg_id, moment, body),
        }
        if self._token:
            headers["authorization"] = f"Bearer {self._token}"
        return headers

    async def _post(
        self, target: str, text: str, request_id: str | None, message: str, *, msg_id: str | None = None
    ) -> MessageRef:
        body = json.dumps(
            {"to": target, "text": text, "request_id": request_id, "message": message},
            ensure_ascii=False,
            separators=(",", ":"),
        )
        msg_id = msg_id or self.message_id(request_id or "", target, message)
        if self._http is None:
            self._http = checked_client(self.destinations)
        try:
            answer = await self._http.post(
                self.send_url,
                content=body.encode(),
                headers=self.signed_headers(msg_id, body),
                timeout=self.timeout,
            )
        except PrivateDestination as exc:
            raise DeliveryError(exc.message, retry=False) from None
        except httpx.HTTPError as exc:
            said = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            raise DeliveryError(masked_in(said, self.send_url)) from None
        status = answer.status_code
        if status >= 300:
            retry = status in (408, 425, 429) or status >= 500
            raise DeliveryError(
                f"the {self.platform} bridge answered {status}",
                retry=retry,
                retry_after=retry_after_seconds(answer.headers.get("retry-after")),
            )
        ref: MessageRef = {"id": msg_id}
        try:
            given = answer.json()
        except ValueError:
            given = None
        if isinstance(given, dict) and isinstance(given.get("message_id"), str | int):
            ref["message_id"] = given["message_id"]
        return ref

    # -- in ----------------------------------------------------------------------------------

    def verify(self, body: bytes, headers: Mapping[str, str]) -> Inbound:
        check_fresh(headers.get("webhook-timestamp"), what=f"the {self.platform} reply's webhook-timestamp")
        try:
            self._signer.verify(body, dict(headers), json_parse=False)
        except (WebhookVerificationError, ValueError) as exc:
            raise BadSignature(f"the {self.platform} reply is not signed right: {exc}") from None
        try:
            data = json.loads(body)
        except ValueError:
            raise BadCallback("the reply is not JSON") from None
        if not isinstance(data, dict):
            raise BadCallback('the reply is a JSON object: {"from": ..., "text": ...}')
        sender, text = data.get("from"), data.get("text")
        if not isinstance(sender, str) or not sender.strip() or not isinstance(text, str):
            raise BadCallback('the reply needs "from" (the sender\'s address) and "text" (strings)')
        sender = sender.strip()
        delivery_id = headers.get("webhook-id")
        reply = parse_reply(text)
        if reply is None:
            return Inbound(
                kind="reply",
                sender=sender,
                reply={"ok": False, "to": sender, "reply": TEXT_HELP[self.locale]},
                delivery_id=delivery_id,
            )
        first, first_answer = self.recent.claim(delivery_id)
        if not first:
            return Inbound(kind="reply", sender=sender, reply=first_answer, delivery_id=delivery_id)
        return Inbound(
            kind="decide",
            sender=sender,
            code=reply.code,
            decision=reply.decision,
            delivery_id=delivery_id,
            extra={"platform": self.platform, "text": text},
        )

    def answer(self, inbound: Inbound, outcome: InboundOutcome | None) -> tuple[int, Any]:
        if outcome is None:
            return 200, inbound.reply
        words = self.recent.reply_to(inbound.sender or "", inbound.decision, outcome, self.locale)
        answer = {"ok": outcome.result == "decided", "to": inbound.sender, "reply": words}
        self.recent.keep_answer(inbound.delivery_id, answer)
        return 200, answer

    async def close(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None


def _code_in(ref: MessageRef) -> str | None:
    code = ref.get("code")
    return code if isinstance(code, str) else None
