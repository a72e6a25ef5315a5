"""`feishu`: Feishu / Lark app messages, through `lark-oapi` (`pip install 'signoff[feishu]'`).

A request is an interactive card (card JSON 2.0: header "AI 想执行：{tool}" / "AI wants to run:
{tool}", the description, the arguments, a button per decision whose `value` names the decision
and the request) sent to the person's open_id with `im/v1/messages`
(`tenant_access_token` from the app's id and secret, cached by lark-oapi until shortly before it
expires). A click comes back as `card.action.trigger` on the app's callback URL: lark-oapi's
event dispatcher decrypts it (`{"encrypt": …}`, AES-256-CBC) and checks its verification token
and signature (`sha256(timestamp + nonce + encrypt_key + body)`); signoff adds what the
dispatcher lacks: a 5-minute window on the signed timestamp, and 401 (not the dispatcher's 500)
for a forged callback. Once the request has ended the card is patched to its final state
(`PATCH im/v1/messages/{id}`), and the execution's result is a reply under it.

Settings (`signoff serve --channels FILE`):

    feishu:
      app_id: cli_a1b2c3
      app_secret: {env: FEISHU_APP_SECRET}
      encrypt_key: {env: FEISHU_ENCRYPT_KEY}            # 事件与回调 › 加密策略 › Encrypt Key
      verification_token: {env: FEISHU_VERIFICATION_TOKEN}
      base_url: https://open.feishu.cn                  # Lark: https://open.larksuite.com

People's addresses are their open_ids (`signoff users set-address alice --feishu ou_…`); the
callback URL (事件与回调 › 回调配置) is `https://<signoff>/channels/<name>/callback`.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any

import lark_oapi as lark
from lark_oapi.api.im.v1 import (
    CreateMessageRequest,
    CreateMessageRequestBody,
    PatchMessageRequest,
    PatchMessageRequestBody,
    ReplyMessageRequest,
    ReplyMessageRequestBody,
)
from lark_oapi.core.const import LARK_REQUEST_NONCE, LARK_REQUEST_SIGNATURE, LARK_REQUEST_TIMESTAMP
from lark_oapi.core.exception import ObtainAccessTokenException
from lark_oapi.core.model import RawRequest
from lark_oapi.core.token.manager import TokenManager
from lark_oapi.event.callback.model.p2_card_action_trigger import (
    P2CardActionTrigger,
    P2CardActionTriggerResponse,
)

from ..errors import ConfigError
from .address_code import AddressCode
from .buttons import from_value
from .contract import (
    BadCallback,
    BadSignature,
    Channel,
    DeliveryError,
    Inbound,
    InboundOutcome,
    MessageRef,
    reminder_key,
)
from .feishu_cards import final_card, notice_card
from .freshness import check_fresh
from .notice import FollowUp, Notice
from .registry import ChannelConfig

API = "https://open.feishu.cn"
FORGED = ("signature verification failed", "invalid verification_token", "encrypt_key not found")
"""The dispatcher's words (in its 500 answer) for a callback that is not the platform's."""
RETRY_CODES = {99991400, 11232, 230020, 99991663, 99991661, 99991668, 99991677}
"""Feishu codes worth trying again: rate limits, and access tokens gone bad (fetched anew)."""
TOKEN_CODES = {99991663, 99991661, 99991668, 99991677}
TOAST = {
    "decided": "success",
    "refused": "error",
    "unknown_sender": "error",
    "unknown_request": "error",
    "invalid": "error",
    "expired": "warning",
}


class FeishuChannel(Channel):
    kind = "feishu"

    def __init__(
        self,
        name: str = "feishu",
        *,
        app_id: str,
        app_secret: str,
        encrypt_key: str,
        verification_token: str,
        base_url: str = API,
        window: float = 300.0,
        timeout: float = 10.0,
    ) -> None:
        super().__init__(name)
        if not encrypt_key or not verification_token:
            # without an Encrypt Key the dispatcher checks no signature at all
            raise ConfigError(f"channel {name!r} (feishu) needs encrypt_key and verification_token")
        self.app_id = app_id
        self.window = window
        self.timeout = timeout
        self._encrypt_key = encrypt_key
        self._verification_token = verification_token
        try:
            self._client = (
                lark.Client.builder()
                .app_id(app_id)
                .app_secret(app_secret)
                .domain(base_url.rstrip("/"))
                .timeout(timeout)
                .build()
            )
        except ValueError as exc:
            raise ConfigError(f"channel {name!r} (feishu): {exc}") from None

    @classmethod
    def from_config(cls, config: ChannelConfig) -> FeishuChannel:
        return cls(
            config.name,
            app_id=str(config.required("app_id")),
            app_secret=config.secret("app_secret"),
            encrypt_key=config.secret("encrypt_key"),
            verification_token=config.secret("verification_token"),
            base_url=str(config.setting("base_url", API)),
            window=float(config.setting("window", 300.0)),
            timeout=config.timeout,
        )

    # -- sending -----------------------------------------------------------------------------

    async def send(self, notice: Notice, target: str) -> MessageRef:
        """The card; a request that ended before its notice went out gets its final card."""
        card = notice_card(notice) if notice.open else final_card(notice)
        suffix = "" if notice.open else ":final"
        body = (
            CreateMessageRequestBody.builder()
            .receive_id(target)
            .msg_type("interactive")
            .content(json.dumps(card, ensure_ascii=False))
            .uuid(dedupe_key(notice.request_id, target + suffix))
            .build()
        )
        request = CreateMessageRequest.builder().receive_id_type("open_id").request_body(body).build()
        response = await self._call("send", self._client.im.v1.message.create, request)
        return {"message_id": response.data.message_id}

    async def update(self, notice: Notice, target: str, ref: MessageRef) -> MessageRef | None:
        message_id = ref.get("message_id")
        if not message_id:
            return await self.send(notice, target)
        body = PatchMessageRequestBody.builder().content(json.dumps(final_card(notice), ensure_ascii=False))
        request = PatchMessageRequest.builder().message_id(message_id).request_body(body.build()).build()
        await self._call("update", self._client.im.v1.message.patch, request)
        return None

    async def follow_up(self, message: FollowUp, target: str, ref: MessageRef) -> MessageRef | None:
        message_id = ref.get("message_id")
        if not message_id:
            return None
        body = (
            ReplyMessageRequestBody.builder()
            .msg_type("text")
            .content(json.dumps({"text": message.text}, ensure_ascii=False))
            .uuid(dedupe_key(message.request_id, f"{target}:follow-up"))
            .build()
        )
        request = ReplyMessageRequest.builder().message_id(message_id).request_body(body).build()
        response = await self._call("follow-up", self._client.im.v1.message.reply, request)
        return {"message_id": response.data.message_id}

    async def remind(self, notice: Notice, target: str, ref: MessageRef) -> MessageRef | None:
        """A reply to the card (its buttons still live there); a new card where there is none."""
        message_id = ref.get("message_id")
        if not message_id:
            return await self.send(notice, target)
        text = f"{notice.reminder} · {notice.title}"
        body = (
            ReplyMessageRequestBody.builder()
            .msg_type("text")
            .content(json.dumps({"text": text}, ensure_ascii=False))
            .uuid(dedupe_key(notice.request_id, f"{target}:remind:{reminder_key(notice)}"))
            .build()
        )
        request = ReplyMessageRequest.builder().message_id(message_id).request_body(body).build()
        response = await self._call("remind", self._client.im.v1.message.reply, request)
        return {"message_id": response.data.message_id}

    async def send_code(self, message: AddressCode, target: str) -> MessageRef:
        """The code, as a text message to the open id `target` (its `uuid` one per code)."""
        body = (
            CreateMessageRequestBody.builder()
            .receive_id(target)
            .msg_type("text")
            .content(json.dumps({"text": message.text}, ensure_ascii=False))
            .uuid(dedupe_key(f"code:{message.id}", target))
            .build()
        )
        request = CreateMessageRequest.builder().receive_id_type("open_id").request_body(body).build()
        response = await self._call("code", self._client.im.v1.message.create, request)
        return {"message_id": response.data.message_id}

    async def _call(self, what: str, method: Any, request: Any) -> Any:
        """One lark-oapi call (synchronous: in a thread, bounded by the client's timeout)."""
        try:
            response = await asyncio.to_thread(method, request)
        except ObtainAccessTokenException as exc:
            raise DeliveryError(f"Feishu refused the app's credentials: {exc}") from None
        except Exception as exc:  # requests' errors, an answer that is not JSON
            raise DeliveryError(f"Feishu {what}: {type(exc).__name__}: {exc}") from None
        if response.success():
            return response
        code, status = response.code, response.raw.status_code if response.raw is not None else None
        if code in TOKEN_CODES:
            TokenManager.cache.set(f"self_tenant_token:{self.app_id}", "", 0)
        retry = code in RETRY_CODES or (status is not None and (status >= 500 or status == 429))
        raise DeliveryError(
            f"Feishu {what} answered code {code}: {response.msg}", retry=retry, retry_after=_reset(response)
        )

    # -- callbacks ---------------------------------------------------------------------------

    def verify(self, body: bytes, headers: Mapping[str, str]) -> Inbound:
        clicks: list[P2CardActionTrigger] = []

        def on_click(event: P2CardActionTrigger) -> P2CardActionTriggerResponse:
            clicks.append(event)
            return P2CardActionTriggerResponse({})

        dispatcher = (
            lark.EventDispatcherHandler.builder(self._encrypt_key, self._verification_token)
            .register_p2_card_action_trigger(on_click)
            .build()
        )
        raw = RawRequest()
        raw.uri = f"/channels/{self.name}/callback"
        raw.body = body
        raw.headers = {
            LARK_REQUEST_TIMESTAMP: headers.get("x-lark-request-timestamp", ""),
            LARK_REQUEST_NONCE: headers.get("x-lark-request-nonce", ""),
            LARK_REQUEST_SIGNATURE: headers.get("x-lark-signature", ""),
        }
        response = dispatcher.do(raw)
        said = _said(response.content)
        if response.status_code != 200:
            self._refuse(said, body, headers)
            return Inbound(kind="reply", reply={"msg": "ignored"})
        if not clicks:
            if isinstance(said, dict) and "challenge" in said:
                return Inbound(kind="reply", reply={"challenge": said["challenge"]})
            return Inbound(kind="reply", reply={"msg": "success"})
        check_fresh(headers.get("x-lark-request-timestamp"), window=self.window)
        return _inbound(clicks[0])

    def _refuse(self, said: Any, body: bytes, headers: Mapping[str, str]) -> None:
        """Map the dispatcher's 500 to what it means: forged (401), unreadable (400), or an
        event signoff does not subscribe to (answered and ignored)."""
        words = str(said.get("msg", "")) if isinstance(said, dict) else ""
        if any(word in words for word in FORGED) or not self._signed(body, headers):
            raise BadSignature("the Feishu callback's signature or token does not verify")
        if "processor not found" in words:
            return
        raise BadCallback(f"the Feishu callback cannot be read: {words or 'no reason given'}")

    def _signed(self, body: bytes, headers: Mapping[str, str]) -> bool:
        timestamp = headers.get("x-lark-request-timestamp", "")
        nonce = headers.get("x-lark-request-nonce", "")
        expected = hashlib.sha256((timestamp + nonce + self._encrypt_key).encode() + body).hexdigest()
        return hmac.compare_digest(expected, headers.get("x-lark-signature", ""))

    def answer(self, inbound: Inbound, outcome: InboundOutcome | None) -> tuple[int, Any]:
        """A toast saying what came of the click (the card itself is patched by the outbox,
        once, whichever channel decided)."""
        if outcome is None:
            return 200, inbound.reply
        kind = TOAST.get(outcome.result, "error")
        return 200, {"toast": {"type": kind, "content": outcome.message}}


def _inbound(click: P2CardActionTrigger) -> Inbound:
    event = click.event
    action = from_value(event.action.value if event is not None and event.action is not None else None)
    if event is None or action is None:
        return Inbound(kind="reply", reply={"msg": "success"})
    operator = event.operator
    context = event.context
    header = click.header
    return Inbound(
        kind="decide",
        sender=operator.open_id if operator is not None else None,
        request_id=action.request_id,
        decision=action.payload(),
        delivery_id=header.event_id if header is not None else None,
        extra={
            "message_id": context.open_message_id if context is not None else None,
            "token": event.token,
        },
    )


def _said(content: bytes | None) -> Any:
    try:
        return json.loads(content or b"null")
    except ValueError:
        return None


def _reset(response: Any) -> float | None:
    """Seconds until Feishu's rate limit resets (`x-ogw-ratelimit-reset`), when it says."""
    headers = response.raw.headers if response.raw is not None else {}
    value = {key.lower(): item for key, item in (headers or {}).items()}.get("x-ogw-ratelimit-reset")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def dedupe_key(request_id: str, target: str) -> str:
    """im/v1/messages' `uuid` (at most 50 characters): the same request to the same person is
    one message even when the send is repeated after a crash (Feishu keeps it an hour)."""
    return hashlib.sha256(f"{request_id}:{target}".encode()).hexdigest()[:50]
