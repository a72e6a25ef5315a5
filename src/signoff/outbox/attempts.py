"""One attempt at an outbox row: render it (a notice, its update, a follow-up, a webhook's
event), call the channel or POST the webhook, and say what came of it (`Outcome`), with the
structured log line (thread, request, handle, platform, result). The worker (`worker`) decides
when and how many; this decides what."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from datetime import timedelta
from typing import Any

from .._util import utcnow
from ..channels.contract import REMINDER_KEY, DeliveryError, MessageRef
from ..channels.notice import build_follow_up, build_notice
from ..channels.registry import ChannelRegistry
from ..destinations import Destinations
from ..errors import RequestNotFound, SignoffError
from ..requests import Request
from ..store import Store
from ..store.outbox_ops import WEBHOOK, OutboxRow, Outcome
from ..store.step_ops import REMINDED
from ..store.webhook_ops import Webhook
from .codes import send_code
from .settings import OutboxSettings
from .webhooks import WebhookPoster, event_body, message_id

log = logging.getLogger("signoff.outbox")
WEBHOOK_TTL = 2.0
"""Seconds a webhook read is used for (a removal or a rotation shows within this)."""


class Postponed(Exception):
    """The row is not to be tried now (its notice is not sent yet); no attempt is counted."""


class Attempts:
    def __init__(
        self,
        store: Store,
        channels: ChannelRegistry,
        settings: OutboxSettings,
        *,
        base_url: str,
        destinations: Destinations,
    ) -> None:
        self.store = store
        self.channels = channels
        self.settings = settings
        self.base_url = base_url
        self.poster = WebhookPoster(destinations)
        self._webhooks: dict[str, tuple[Webhook | None, float]] = {}

    async def attempt(self, row: OutboxRow, context: dict[str, Any], request: Request | None) -> Outcome:
        """One try. `request` as read when the row was claimed (an update reads it again: it
        renders the final state, which may be newer)."""
        target = row.target or ""
        try:
            if row.request_id is not None and (
                request is None or (row.message != "notice" and row.channel != WEBHOOK)
            ):
                request = await asyncio.to_thread(self.store.get_request, row.request_id)
        except RequestNotFound:
            return _skipped(row, target, "the request is gone")
        try:
            if request is None:  # a verification code, about no request
                return await send_code(self.store, self.channels, row, context)
            context["thread"] = request.thread_id
            context["tool"] = request.tool_name
            if row.channel == WEBHOOK:
                return await self._webhook(row, request)
            return await self._message(row, request, context)
        except DeliveryError as exc:
            return self._failed(row, context.get("target", target), exc.message, exc.retry, exc.retry_after)
        except TimeoutError:
            return self._failed(row, context.get("target", target), "timed out", True, None)
        except Postponed:
            raise
        except Exception as exc:  # a channel's bug must not stop the worker: retried, and logged
            log.exception("channel %s raised while sending outbox row %d", row.channel, row.id)
            return self._failed(
                row, context.get("target", target), f"{type(exc).__name__}: {exc}", True, None
            )

    async def _webhook(self, row: OutboxRow, request: Request) -> Outcome:
        target = row.target or ""
        webhook = await self._webhook_named(target)
        if webhook is None:
            return _skipped(row, target, "the webhook was removed")
        if webhook.disabled:  # sent nothing: an admin sends it again once the webhook is enabled
            return self._failed(row, target, f"the webhook {webhook.id} is disabled", False, None)
        body = row.body
        if body is None:
            execution = None
            if row.event.startswith("execution."):
                execution = await asyncio.to_thread(self.store.get_execution, request.id)
            body = event_body(row.event, request, execution, row.created_at)
        try:
            await self.poster.post(
                webhook, message_id(request.id, row.id), body, self.settings.webhook_timeout
            )
        except DeliveryError as exc:
            outcome = self._failed(row, target, exc.message, exc.retry, exc.retry_after)
            return Outcome(**{**outcome.__dict__, "body": body})
        return Outcome(state="sent", result="sent", target=target, next_at=utcnow(), body=body)

    async def _webhook_named(self, webhook_id: str) -> Webhook | None:
        """The webhook, as read at most `WEBHOOK_TTL` seconds ago (a burst reads it once)."""
        now = asyncio.get_running_loop().time()
        cached = self._webhooks.get(webhook_id)
        if cached is not None and now - cached[1] < WEBHOOK_TTL:
            return cached[0]
        webhook = await asyncio.to_thread(self.store.get_webhook, webhook_id)
        self._webhooks[webhook_id] = (webhook, now)
        return webhook

    async def _message(self, row: OutboxRow, request: Request, context: dict[str, Any]) -> Outcome:
        channel = self.channels.get(row.channel)
        recipient = row.recipient or ""
        if channel is None:
            return self._failed(row, recipient, self.channels.why_not(row.channel), False, None)
        context["platform"] = channel.kind
        target = row.target or await asyncio.to_thread(self.store.address_of, recipient, channel.address_kind)
        if not target:
            why = await asyncio.to_thread(_no_address, self.store, recipient, channel.address_kind)
            return self._failed(row, recipient, why, False, None)
        context["target"] = target
        locale = _locale(self.channels, row.channel)
        request_url = f"{self.base_url}/requests/{request.id}"
        if row.message == "notice":
            if request.is_terminal:  # it ended before its notice could go: its update says nothing new
                return _skipped(row, target, f"the request was already {request.status.value}")
            link = await self._handle(request, recipient, context)
            code = None
            if channel.reply_codes:
                code = await asyncio.to_thread(self.store.reply_code, request.id, row.channel, recipient)
            notice = build_notice(
                request, approver=recipient, link=link, request_url=request_url, locale=locale, code=code
            )
            ref = await asyncio.wait_for(channel.send(notice, target), channel.timeout)
            return Outcome(state="sent", result="sent", target=target, next_at=utcnow(), ref=ref)
        parent = await self._parent(row)
        if parent is None:
            return _skipped(row, target, "its notice was never delivered")
        parent_ref: MessageRef = parent.ref or {}
        new_ref: MessageRef | None
        if row.event == REMINDED:
            return await self._remind(row, request, context, parent_ref)
        if row.message == "update":
            notice = build_notice(
                request, approver=recipient, link=None, request_url=request_url, locale=locale
            )
            new_ref = await asyncio.wait_for(channel.update(notice, target, parent_ref), channel.timeout)
        else:
            execution = await asyncio.to_thread(self.store.get_execution, request.id)
            if execution is None:
                return _skipped(row, target, "no execution was recorded")
            message = build_follow_up(request, execution, locale)
            new_ref = await asyncio.wait_for(channel.follow_up(message, target, parent_ref), channel.timeout)
        return Outcome(state="sent", result="sent", target=target, next_at=utcnow(), ref=new_ref)

    async def _remind(
        self, row: OutboxRow, request: Request, context: dict[str, Any], parent_ref: MessageRef
    ) -> Outcome:
        """A reminder of a request still open, after (under) the notice `parent_ref` names."""
        channel = self.channels.get(row.channel)
        target, recipient = context["target"], row.recipient or ""
        assert channel is not None, "checked by _message"
        if request.is_terminal:
            return _skipped(row, target, f"the request was already {request.status.value}")
        code = None
        if channel.reply_codes:
            code = await asyncio.to_thread(self.store.reply_code, request.id, row.channel, recipient)
        notice = build_notice(
            request,
            approver=recipient,
            link=await self._handle(request, recipient, context),
            request_url=f"{self.base_url}/requests/{request.id}",
            locale=_locale(self.channels, row.channel),
            now=utcnow(),
            code=code,
            reminder=True,
        )
        notice = replace(notice, extra={**notice.extra, REMINDER_KEY: str(row.id)})
        new_ref = await asyncio.wait_for(channel.remind(notice, target, parent_ref), channel.timeout)
        return Outcome(state="sent", result="sent", target=target, next_at=utcnow(), ref=new_ref)

    async def _parent(self, row: OutboxRow) -> OutboxRow | None:
        """The notice an update or follow-up goes with, once sent; Postponed while it is not."""
        if row.parent_id is None:
            return None
        parent = await asyncio.to_thread(self.store.get_outbox, row.parent_id)
        if parent is None or parent.state in ("dead", "skipped"):
            return None
        if parent.state == "pending":
            raise Postponed()
        return parent

    async def _handle(self, request: Request, recipient: str, context: dict[str, Any]) -> str | None:
        """An expiring link to the request's card for `recipient` (None if they are not a user)."""
        lasts = min(self.settings.handle_ttl, request.deadline - utcnow())
        if request.is_terminal or lasts <= timedelta(0):
            return None
        try:
            secret, credential = await asyncio.to_thread(
                self.store.issue_credential,
                "handle",
                recipient,
                ttl=lasts,
                request_id=request.id,
                actor="system",
                channel="outbox",
            )
        except SignoffError:
            return None
        context["handle"] = credential.id
        return f"{self.base_url}/h/{secret}"

    def _failed(
        self, row: OutboxRow, target: str, error: str, retry: bool, retry_after: float | None
    ) -> Outcome:
        now = utcnow()
        policy = self.settings.retry
        delay = policy.delay(row.attempts + 1, retry_after)
        give_up = row.created_at + policy.give_up_after
        if not retry or now + timedelta(seconds=delay) > give_up:
            return Outcome(state="dead", result="failed", target=target, next_at=now, error=error)
        return Outcome(
            state="pending",
            result="retrying",
            target=target,
            next_at=now + timedelta(seconds=delay),
            error=error,
        )

    def log(self, row: OutboxRow, outcome: Outcome, context: dict[str, Any], recorded: bool) -> None:
        level = logging.INFO if outcome.result in ("sent", "skipped") else logging.WARNING
        if outcome.state == "dead":
            level = logging.ERROR
        if not log.isEnabledFor(level):
            return
        fields = {
            "thread": context.get("thread"),
            "request": row.request_id,
            "handle": context.get("handle"),
            "platform": context.get("platform", row.channel),
            "tool": context.get("tool"),
            "channel": row.channel,
            "target": outcome.target,
            "event": row.event,
            "message": row.message,
            "attempt": row.attempts + (1 if outcome.counts else 0),
            "result": outcome.result if recorded else "lost_claim",
        }
        text = " ".join(f"{key}={value}" for key, value in fields.items() if value is not None)
        if outcome.error:
            text += f" error={outcome.error!r}"
        log.log(level, "approval dispatched: %s", text, extra={"signoff": fields})


def _skipped(row: OutboxRow, target: str, why: str) -> Outcome:
    return Outcome(
        state="skipped", result="skipped", target=target, next_at=utcnow(), error=why, counts=False
    )


def _no_address(store: Store, person: str, kind: str) -> str:
    """Why nothing can be sent to `person` on channels of `kind` (for the delivery log)."""
    state = store.address_state(person, kind)
    if state is not None and not state.verified:
        return (
            f"{person}'s {kind} address is not verified (they enter the code sent there on the inbox's "
            "Settings page, or an admin sets it: signoff users set-address)"
        )
    return f"{person} has no {kind} address (signoff users set-address)"


def _locale(channels: ChannelRegistry, name: str) -> Any:
    config = channels.config_of(name)
    return config.locale if config is not None else "en"
