"""`wecom`: 企业微信 (WeCom) app messages. A request is a `template_card` of type
`button_interaction` (title "AI 想执行：{tool}", the description, the arguments, a button per
decision) sent with `message/send`; a click comes back as a `template_card_event` on the app's
callback URL, signed and encrypted (`wecom_crypto`); the card's buttons are then replaced by its
final state ("✅ 已批准（alice）") with `update_template_card`, and the execution's result follows
as a text message.

Settings (`signoff serve --channels FILE`):

    wecom:
      corp_id: ww0123456789abcdef           # 企业ID
      agent_id: 1000002                     # the app's AgentId
      corp_secret: {env: WECOM_SECRET}      # the app's Secret
      token: {env: WECOM_TOKEN}             # 接收消息 › Token
      encoding_aes_key: {env: WECOM_AES}    # 接收消息 › EncodingAESKey (43 characters)
      base_url: https://qyapi.weixin.qq.com # the default

People's addresses are their WeCom user ids (`signoff users set-address alice --wecom zhangsan`);
the callback URL is `https://<signoff>/channels/<name>/callback` (GET verifies it, POST brings
clicks).
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import time
from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import urlsplit

import httpx

from ..errors import ConfigError
from ..presentation import cut
from .address_code import AddressCode
from .buttons import CLICKABLE, GRANT, as_key, from_key
from .contract import BadCallback, Channel, DeliveryError, Inbound, InboundOutcome, MessageRef
from .freshness import check_fresh
from .notice import FollowUp, Notice
from .registry import ChannelConfig
from .texts import GRANT_BUTTON
from .wecom_crypto import WeComCrypto, cdata, read_xml

API = "https://qyapi.weixin.qq.com"
TOKEN_MARGIN = 300.0
"""Seconds before its stated expiry an access_token is fetched again."""
RETRY_CODES = {-1, 45009, 45033}
"""errcodes worth trying again: system busy, call frequency and concurrency limits."""
TOKEN_CODES = {40001, 40014, 42001}
"""errcodes meaning the access_token is no good any more (fetched again on the next try)."""
STYLE = {"approve": 1, "reject": 3}
"""`button_list.style` per decision (1-4; 1 the app's primary style)."""


class WeComChannel(Channel):
    kind = "wecom"
    takes_query: ClassVar[bool] = True
    """`verify` needs the query string: WeCom signs its callbacks there (see the notes)."""

    def __init__(
        self,
        name: str = "wecom",
        *,
        corp_id: str,
        corp_secret: str,
        agent_id: int,
        token: str,
        encoding_aes_key: str,
        base_url: str = API,
        window: float = 300.0,
        timeout: float = 10.0,
    ) -> None:
        super().__init__(name)
        self.crypto = WeComCrypto(token=token, encoding_aes_key=encoding_aes_key, corp_id=corp_id)
        self.corp_id = corp_id
        self.agent_id = agent_id
        self.window = window
        self.timeout = timeout
        self._secret = corp_secret
        self._base_url = checked_base_url(name, base_url)
        self._http: httpx.AsyncClient | None = None
        self._token: tuple[str, float] | None = None
        self._token_lock = asyncio.Lock()

    @classmethod
    def from_config(cls, config: ChannelConfig) -> WeComChannel:
        return cls(
            config.name,
            corp_id=str(config.required("corp_id")),
            corp_secret=config.secret("corp_secret"),
            agent_id=int(config.required("agent_id")),
            token=config.secret("token"),
            encoding_aes_key=config.secret("encoding_aes_key"),
            base_url=str(config.setting("base_url", API)),
            window=float(config.setting("window", 300.0)),
            timeout=config.timeout,
        )

    # -- sending -----------------------------------------------------------------------------

    async def send(self, notice: Notice, target: str) -> MessageRef:
        """The card; a request that ended before its notice went out is a text saying how."""
        if notice.final is not None:
            return await self._text(target, f"{notice.title}\n{notice.final.text}")
        card = template_card(notice, task_id=task_id(notice.request_id, target))
        body = {
            "touser": target,
            "msgtype": "template_card",
            "agentid": self.agent_id,
            "template_card": card,
        }
        answer = await self._call("/cgi-bin/message/send", body)
        if answer.get("invaliduser"):
            raise DeliveryError(f"WeCom does not know the user {target!r} (invaliduser)", retry=False)
        return {
            "msgid": answer.get("msgid"),
            "response_code": answer.get("response_code"),
            "task_id": card["task_id"],
        }

    async def update(self, notice: Notice, target: str, ref: MessageRef) -> MessageRef | None:
        """The card's buttons become one grey button saying how it ended (`replace_name`); a
        card that cannot be updated any more (its response_code is 72 hours old, or spent)
        gets a text message saying it instead."""
        assert notice.final is not None, "update() is for ended requests"
        code = ref.get("response_code")
        if code:
            body = {
                "userids": [target],
                "agentid": self.agent_id,
                "response_code": code,
                "button": {"replace_name": cut(notice.final.text, 30)},
            }
            try:
                await self._call("/cgi-bin/message/update_template_card", body)
            except DeliveryError as exc:
                if exc.retry:
                    raise
            else:
                return None
        return await self._text(target, f"{notice.title}\n{notice.final.text}")

    async def follow_up(self, message: FollowUp, target: str, ref: MessageRef) -> MessageRef | None:
        return await self._text(target, message.text)

    async def remind(self, notice: Notice, target: str, ref: MessageRef) -> MessageRef | None:
        """A text under the card (a card's task_id is its notice's own): the reminder and a link."""
        return await self._text(
            target, f"{notice.reminder}\n{notice.title}\n{notice.link or notice.request_url}"
        )

    async def send_code(self, message: AddressCode, target: str) -> MessageRef:
        """The code, as a text message to the WeCom user `target`."""
        return await self._text(target, message.text)

    async def _text(self, target: str, text: str) -> MessageRef:
        body = {"touser": target, "msgtype": "text", "agentid": self.agent_id, "text": {"content": text}}
        answer = await self._call("/cgi-bin/message/send", body)
        return {"msgid": answer.get("msgid")}

    async def _call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        token = await self._access_token()
        answer = await self._request("POST", path, params={"access_token": token}, json=body)
        code = answer.get("errcode", 0)
        if code in TOKEN_CODES:
            self._token = None
        if code:
            retry = code in RETRY_CODES or code in TOKEN_CODES
            raise DeliveryError(
                f"WeCom {path} answered errcode {code}: {answer.get('errmsg')}",
                retry=retry,
                retry_after=60.0 if code == 45009 else None,
            )
        return answer

    async def _access_token(self) -> str:
        async with self._token_lock:
            if self._token is not None and self._token[1] > time.monotonic():
                return self._token[0]
            answer = await self._request(
                "GET", "/cgi-bin/gettoken", params={"corpid": self.corp_id, "corpsecret": self._secret}
            )
            code = answer.get("errcode", 0)
            if code or not answer.get("access_token"):
                raise DeliveryError(
                    f"WeCom gettoken answered errcode {code}: {answer.get('errmsg')}",
                    retry=code in RETRY_CODES,
                )
            lasts = float(answer.get("expires_in", 7200))
            self._token = (str(answer["access_token"]), time.monotonic() + max(0.0, lasts - TOKEN_MARGIN))
            return self._token[0]

    async def _request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        if self._http is None:
            self._http = httpx.AsyncClient(base_url=self._base_url, timeout=self.timeout)
        try:
            response = await self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise DeliveryError(f"WeCom {path}: {type(exc).__name__}: {exc}") from None
        if response.status_code >= 500 or response.status_code == 429:
            raise DeliveryError(f"WeCom {path} answered HTTP {response.status_code}")
        try:
            answer = response.json()
        except ValueError:
            raise DeliveryError(f"WeCom {path} answered HTTP {response.status_code}, not JSON") from None
        if not isinstance(answer, dict):
            raise DeliveryError(f"WeCom {path} answered something other than an object", retry=False)
        return answer

    async def close(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    # -- callbacks ---------------------------------------------------------------------------

    def verify(
        self, body: bytes, headers: Mapping[str, str], query: Mapping[str, str] | None = None
    ) -> Inbound:
        """A GET with `echostr` (the URL check) answers the decrypted echostr; a POST's
        `template_card_event` for one of signoff's buttons is a decision; any other message or
        event is acknowledged and ignored."""
        if query is None:
            raise BadCallback(
                "WeCom signs its callbacks in the query string: "
                f"its callback URL is /channels/{self.name}/wecom"
            )
        signature, timestamp, nonce = query.get("msg_signature"), query.get("timestamp"), query.get("nonce")
        echostr = query.get("echostr")
        if echostr is not None and not body:
            self.crypto.check(signature, timestamp, nonce, echostr)
            check_fresh(timestamp, window=self.window)
            return Inbound(kind="reply", reply=self.crypto.decrypt(echostr).decode("utf-8", "replace"))
        outer = read_xml(body)
        encrypted = outer.get("Encrypt")
        if not encrypted:
            raise BadCallback("the WeCom callback has no Encrypt element")
        self.crypto.check(signature, timestamp, nonce, encrypted)
        check_fresh(timestamp, window=self.window)
        message = read_xml(self.crypto.decrypt(encrypted))
        action = None
        if message.get("MsgType") == "event" and message.get("Event") == "template_card_event":
            action = from_key(message.get("EventKey", ""))
        if action is None:
            return Inbound(kind="reply", reply="")
        sender = message.get("FromUserName", "")
        return Inbound(
            kind="decide",
            sender=sender,
            request_id=action.request_id,
            decision=action.payload(),
            delivery_id=hashlib.sha256(
                "|".join([sender, message.get("CreateTime", ""), message.get("EventKey", "")]).encode()
            ).hexdigest()[:32],
            extra={
                "response_code": message.get("ResponseCode"),
                "task_id": message.get("TaskId"),
                "to": sender,
                "from": message.get("ToUserName", self.corp_id),
                "timestamp": timestamp,
                "nonce": nonce,
            },
        )

    def answer(self, inbound: Inbound, outcome: InboundOutcome | None) -> tuple[int, Any]:
        """A decision is answered with an empty body (WeCom's "received"; the outbox then updates
        the card once); a refusal with an encrypted passive text reply saying why."""
        if outcome is None:
            return 200, inbound.reply if inbound.reply is not None else ""
        if outcome.result == "decided":
            return 200, ""
        extra = inbound.extra
        reply = (
            f"<xml><ToUserName>{cdata(str(extra.get('to', '')))}</ToUserName>"
            f"<FromUserName>{cdata(str(extra.get('from', self.corp_id)))}</FromUserName>"
            f"<CreateTime>{int(time.time())}</CreateTime><MsgType><![CDATA[text]]></MsgType>"
            f"<Content>{cdata(outcome.message)}</Content></xml>"
        )
        return 200, self.crypto.reply(
            reply,
            timestamp=str(extra.get("timestamp") or int(time.time())),
            nonce=str(extra.get("nonce") or ""),
        )


def checked_base_url(name: str, url: str) -> str:
    """The API's origin: https, or http on loopback only (a local stand-in), since the corp's
    secret travels to it."""
    parts = urlsplit(url)
    loopback = parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost", "::1")
    if not parts.hostname or not (parts.scheme == "https" or loopback):
        raise ConfigError(f"channel {name!r} (wecom): base_url must be an https URL (got {url!r})")
    return url.rstrip("/")


def task_id(request_id: str, target: str) -> str:
    """The card's `task_id` (`[A-Za-z0-9_@-]`, at most 128 bytes): the request, the person, and a
    part new on every send, because WeCom refuses a task_id it has seen, and a send repeated
    after a crash (or a second `signoff channels test`) must still arrive."""
    person = hashlib.sha256(target.encode()).hexdigest()[:12]
    return f"{request_id}-{person}-{secrets.token_hex(4)}"


def template_card(notice: Notice, *, task_id: str) -> dict[str, Any]:
    """The `button_interaction` card for an open notice."""
    rows = notice.arg_rows
    shown = rows if len(rows) <= 6 else [*rows[:5], ("…", f"+{len(rows) - 5}")]
    long_description = [cut(notice.description, 160)] if len(notice.description) > 44 else []
    card: dict[str, Any] = {
        "card_type": "button_interaction",
        "main_title": {"title": cut(notice.title, 36), "desc": cut(notice.description, 44)},
        "sub_title_text": "\n".join(
            [*long_description, *([notice.four_eyes] if notice.four_eyes else []), notice.valid_for]
        ),
        "horizontal_content_list": [
            {"keyname": cut(name, 10), "value": cut(text, 30)} for name, text in shown
        ],
        "task_id": task_id,
        "button_list": buttons(notice),
    }
    if notice.link:
        card["card_action"] = {"type": 1, "url": notice.link}
    return card


def buttons(notice: Notice) -> list[dict[str, Any]]:
    """A callback button per decision a click makes, a link button (to the request's card in
    the browser) for those that need a form (edit, answer), and after Approve the standing grant
    its rule allows (if any: "+ like this for 30m", an approval with the grant)."""
    listed: list[dict[str, Any]] = []
    for decision in notice.decisions:
        label = notice.buttons[decision]
        if decision in CLICKABLE:
            listed.append(
                {"type": 0, "text": label, "style": STYLE[decision], "key": as_key(decision, notice)}
            )
        elif notice.link:
            listed.append({"type": 1, "text": label, "style": 2, "url": notice.link})
        if decision == "approve" and notice.grant_minutes:
            grant = GRANT_BUTTON[notice.locale].format(minutes=notice.grant_minutes)
            listed.append({"type": 0, "text": grant, "style": 1, "key": as_key(GRANT, notice)})
    return listed
