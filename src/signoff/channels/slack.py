"""`slack`: requests as Slack messages with Block Kit buttons, answered through Slack's
interactivity (DESIGN §9, issue 11). Needs `pip install 'signoff[slack]'` (slack_sdk).

    channels:
      slack:
        bot_token: {env: SLACK_BOT_TOKEN}          # xoxb-…, scopes chat:write (+ im:write)
        signing_secret: {env: SLACK_SIGNING_SECRET}
        api_url: https://slack.com/api/            # optional (a test server's …/api/)

A person's address is their Slack user id (`signoff users set-address alice --slack U123`): the
bot writes to them in its DM (a channel id `C…` works too, for a shared channel). The message is
posted with `chat.postMessage` (its reference `{"channel", "ts"}`), turned into its final state
with `chat.update` once the request ends, however and wherever it was decided, and followed by
the execution's result as a reply in its thread.

Slack's Interactivity Request URL is `https://SIGNOFF/channels/NAME/callback`: every callback's
v0 signature is checked with slack_sdk's `SignatureVerifier` (HMAC-SHA256 of `v0:{ts}:{body}`,
5-minute window) before anything in it is read. Approve decides at once; edit, answer and reject
open a modal first (`views.open`), whose submission decides (see `slack_interactions`). The one
deciding is the Slack user who clicked, mapped to a signoff person by their address; whatever
is refused is answered with an ephemeral message (or the modal's errors) and audited.

The Web API is called through slack_sdk's `WebClient` in a worker thread, with its own timeout
and no retries of its own (the outbox retries, with backoff; Slack's `ratelimited` says when).
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Mapping
from functools import partial
from typing import Any
from urllib.error import URLError

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError, SlackObjectFormationError
from slack_sdk.signature import SignatureVerifier

from ..presentation import cut
from .address_code import AddressCode
from .contract import BadSignature, CallbackHost, Channel, DeliveryError, Inbound, InboundOutcome, MessageRef
from .freshness import check_fresh
from .notice import FollowUp, Notice
from .registry import ChannelConfig
from .slack_blocks import MESSAGE_BLOCK, SECTION_MAX, escape, fallback_text, message_blocks
from .slack_payloads import parse_interaction, read_form, unknown
from .texts import Locale

log = logging.getLogger("signoff.channels.slack")

DEFAULT_API_URL = "https://slack.com/api/"
REMEMBERED = 10_000
"""How many sent messages a channel remembers (see `SlackChannel._sent`)."""
WINDOW_SECONDS = 5 * 60
"""How old (or how far ahead) a callback's timestamp may be: Slack's own replay window."""
FOR_GOOD = frozenset(
    {
        "account_inactive",
        "cant_update_message",
        "channel_not_found",
        "edit_window_closed",
        "invalid_auth",
        "invalid_blocks",
        "is_archived",
        "message_not_found",
        "missing_scope",
        "msg_too_long",
        "no_permission",
        "not_authed",
        "not_in_channel",
        "token_revoked",
        "user_not_found",
        "user_not_visible",
    }
)
"""Slack errors that sending again will not mend: the row is dead-lettered at once."""

NO_FORM: dict[Locale, str] = {
    "en": "This form opens in signoff: use “Open in signoff” on the message.",
    "zh": "请点消息上的“在 signoff 中打开”来填写。",
}
"""Said when a modal cannot be opened: the server took the callback without the Slack
channel's own handler (`handle`), or Block Kit cannot show the request's form."""


class SlackChannel(Channel):
    kind = "slack"

    def __init__(
        self,
        name: str = "slack",
        *,
        bot_token: str,
        signing_secret: str,
        api_url: str = DEFAULT_API_URL,
        locale: Locale = "en",
        timeout: float = 10.0,
    ) -> None:
        super().__init__(name)
        self.timeout = timeout
        self.locale: Locale = locale
        self.api_url = api_url if api_url.endswith("/") else api_url + "/"
        self._token = bot_token
        self._verifier = SignatureVerifier(signing_secret)
        self._client: WebClient | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._sent: OrderedDict[tuple[str, str], MessageRef] = OrderedDict()
        """The messages this process posted, by (request, target): one notice per person is
        never posted twice, should the outbox try a send again that worked (its result lost)."""

    @classmethod
    def from_config(cls, config: ChannelConfig) -> SlackChannel:
        return cls(
            config.name,
            bot_token=config.secret("bot_token"),
            signing_secret=config.secret("signing_secret"),
            api_url=str(config.setting("api_url", DEFAULT_API_URL)),
            locale=config.locale,
            timeout=config.timeout,
        )

    @property
    def client(self) -> WebClient:
        """slack_sdk's client (urllib underneath): its timeout this channel's, no retries of its own."""
        if self._client is None:
            self._client = WebClient(
                token=self._token,
                base_url=self.api_url,
                timeout=max(1, round(self.timeout)),
                retry_handlers=[],
            )
        return self._client

    async def call(self, method: str, **arguments: Any) -> dict[str, Any]:
        """One Web API method (`chat.postMessage`…); its answer's data. Failures as `DeliveryError`."""
        try:
            response = await asyncio.to_thread(partial(self.client.api_call, method, json=arguments))
        except SlackApiError as exc:
            error = str(exc.response.get("error") or "unknown_error")
            retry_after = _retry_after(exc.response.headers) if error == "ratelimited" else None
            raise DeliveryError(
                f"Slack {method}: {error}", retry=error not in FOR_GOOD, retry_after=retry_after
            ) from None
        except (SlackClientError, URLError, OSError, ValueError) as exc:
            raise DeliveryError(f"Slack {method}: {type(exc).__name__}: {exc}") from None
        data = response.data
        return data if isinstance(data, dict) else {}

    # -- sending ------------------------------------------------------------------------------

    async def send(self, notice: Notice, target: str) -> MessageRef:
        key = (notice.request_id, target)
        if key in self._sent:
            return dict(self._sent[key])
        data = await self.call(
            "chat.postMessage",
            channel=target,
            text=fallback_text(notice),
            blocks=_blocks(notice),
            unfurl_links=False,
            unfurl_media=False,
            metadata=_metadata(notice, target),
        )
        ref = {"channel": str(data.get("channel") or target), "ts": str(data.get("ts") or "")}
        if not ref["ts"]:
            raise DeliveryError("Slack chat.postMessage answered without the message's ts")
        self._sent[key] = ref
        while len(self._sent) > REMEMBERED:
            self._sent.popitem(last=False)
        self._log_sent("send", notice.request_id, notice.thread_id, target, ref)
        return dict(ref)

    async def update(self, notice: Notice, target: str, ref: MessageRef) -> MessageRef | None:
        if not ref.get("channel") or not ref.get("ts"):
            raise DeliveryError(f"no Slack message to update (reference {ref!r})", retry=False)
        await self.call(
            "chat.update",
            channel=ref["channel"],
            ts=ref["ts"],
            text=fallback_text(notice),
            blocks=_blocks(notice),
            metadata=_metadata(notice, target),
        )
        self._log_sent("update", notice.request_id, notice.thread_id, target, ref)
        return None

    async def follow_up(self, message: FollowUp, target: str, ref: MessageRef) -> MessageRef | None:
        """The execution's result, as a reply in the message's thread (a new message without one)."""
        text = cut(escape(message.text), SECTION_MAX)
        arguments: dict[str, Any] = {"channel": ref.get("channel") or target, "text": text}
        if ref.get("ts"):
            arguments["thread_ts"] = ref["ts"]
        data = await self.call("chat.postMessage", **arguments)
        sent = {"channel": str(data.get("channel") or arguments["channel"]), "ts": str(data.get("ts") or "")}
        self._log_sent("follow_up", message.request_id, None, target, sent)
        return sent

    async def remind(self, notice: Notice, target: str, ref: MessageRef) -> MessageRef | None:
        """A reply in the notice's thread (its buttons are still live up there), else a new notice."""
        if not ref.get("channel") or not ref.get("ts"):
            return await super().remind(notice, target, ref)
        text = cut(escape(f"{notice.reminder} · {notice.title}"), SECTION_MAX)
        data = await self.call("chat.postMessage", channel=ref["channel"], thread_ts=ref["ts"], text=text)
        sent = {"channel": str(data.get("channel") or ref["channel"]), "ts": str(data.get("ts") or "")}
        self._log_sent("remind", notice.request_id, notice.thread_id, target, sent)
        return sent

    async def send_code(self, message: AddressCode, target: str) -> MessageRef:
        """The code, as a plain message in the bot's DM with the Slack user `target`."""
        data = await self.call(
            "chat.postMessage",
            channel=target,
            text=escape(message.text),
            unfurl_links=False,
            unfurl_media=False,
        )
        return {"channel": str(data.get("channel") or target), "ts": str(data.get("ts") or "")}

    def _log_sent(
        self, action: str, request_id: str, thread: str | None, target: str, ref: MessageRef
    ) -> None:
        fields = {
            "thread": thread,
            "request": request_id,
            "platform": "slack",
            "channel": self.name,
            "action": action,
            "target": target,
            "slack_channel": ref.get("channel"),
            "ts": ref.get("ts"),
            "result": "sent",
        }
        text = " ".join(f"{key}={value}" for key, value in fields.items() if value is not None)
        log.info("slack %s: %s", action, text, extra={"signoff": fields})

    async def ephemeral(self, inbound: Inbound, text: str) -> None:
        """Tell only the person who clicked (`chat.postEphemeral` where the message is)."""
        channel, user = inbound.extra.get("slack_channel"), inbound.sender
        if not channel or not user:
            return
        try:
            await asyncio.wait_for(
                self.call("chat.postEphemeral", channel=channel, user=user, text=escape(text)), self.timeout
            )
        except (DeliveryError, TimeoutError) as exc:
            log.warning("slack ephemeral to %s in %s not sent: %s", user, channel, exc)

    def later(self, work: Any) -> None:
        """Run `work` (a coroutine) after the callback is answered (Slack wants its ack in 3 s)."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    # -- callbacks ----------------------------------------------------------------------------

    def verify(self, body: bytes, headers: Mapping[str, str]) -> Inbound:
        self.check_signature(body, headers)
        payload = read_form(body)
        if payload is None:
            return unknown(self.locale)
        return parse_interaction(payload, self.locale)

    def check_signature(self, body: bytes, headers: Mapping[str, str]) -> None:
        """Raise `BadSignature` unless Slack signed `body` within the last five minutes."""
        lowered = {key.lower(): value for key, value in headers.items()}
        stamp, signature = lowered.get("x-slack-request-timestamp"), lowered.get("x-slack-signature")
        if not stamp or not signature:
            raise BadSignature("the Slack callback has no X-Slack-Signature / X-Slack-Request-Timestamp")
        check_fresh(stamp, window=WINDOW_SECONDS, what="the Slack callback's timestamp")
        try:
            valid = self._verifier.is_valid(body=body, timestamp=stamp, signature=signature)
        except UnicodeDecodeError:
            valid = False
        if not valid:
            raise BadSignature("the Slack signature does not verify (is the signing secret right?)")

    def answer(self, inbound: Inbound, outcome: InboundOutcome | None) -> tuple[int, Any]:
        """Slack's answer: nothing for a click (a refusal goes as an ephemeral message, after
        the ack), `response_action` for a modal: errors to show in it, or clear to close it."""
        if outcome is None:
            if inbound.extra.get("open"):  # a modal needs the server: see `handle`
                self.later(self.ephemeral(inbound, NO_FORM[self.locale]))
            if inbound.extra.get("type") == "unknown" and inbound.extra.get("slack_channel"):
                self.later(self.ephemeral(inbound, inbound.reply["text"]))
            return 200, inbound.reply
        if inbound.extra.get("type") == "view_submission":
            if outcome.result == "decided":
                return 200, {"response_action": "clear"}
            return 200, {
                "response_action": "errors",
                "errors": {inbound.extra.get("error_block", MESSAGE_BLOCK): outcome.message},
            }
        if outcome.result != "decided":
            self.later(self.ephemeral(inbound, outcome.message))
        return 200, None

    async def handle(self, host: CallbackHost, inbound: Inbound) -> tuple[int, Any] | None:
        """The whole interaction (modals included): see `slack_interactions.handle`."""
        from .slack_interactions import handle

        answered: tuple[int, Any] = await handle(host, self, inbound)
        return answered


def _blocks(notice: Notice) -> list[dict[str, Any]]:
    """The message's blocks as JSON; one Block Kit refuses is given up (sending again won't help)."""
    try:
        return [block.to_dict() for block in message_blocks(notice)]
    except SlackObjectFormationError as exc:
        raise DeliveryError(f"the Slack message cannot be built: {exc}", retry=False) from None


def _metadata(notice: Notice, target: str) -> dict[str, Any]:
    """Message metadata naming the request (so a message found later says what it was for)."""
    return {
        "event_type": "signoff_request",
        "event_payload": {"request_id": notice.request_id, "target": target},
    }


def _retry_after(headers: Mapping[str, Any] | None) -> float | None:
    for key, value in (headers or {}).items():
        if key.lower() == "retry-after":
            try:
                return float(value[0] if isinstance(value, list) else value)
            except (TypeError, ValueError):
                return None
    return None
