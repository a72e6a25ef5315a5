"""The delivery worker: sends the outbox's rows, inside `signoff serve` (DESIGN §9).

It claims due rows (with a lease: see `store.outbox_ops`), and sends each in its channel's own
lane: a lane has its own concurrency, every call its own timeout, and holds a bounded number of
claimed rows, so a platform that fails or hangs delays only its own rows, never another
channel's or any decision (the rows were committed with the decision; sending is after).
A failed attempt is retried with exponential backoff and jitter (`RetryPolicy`), and past its
time dead-lettered; every attempt lands in the request's delivery log and in one structured log
line (thread, request, handle, platform, result).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from collections import Counter
from datetime import timedelta
from typing import Any

from .._util import utcnow
from ..channels.contract import DeliveryError, MessageRef
from ..channels.notice import build_follow_up, build_notice
from ..channels.registry import ChannelRegistry
from ..errors import RequestNotFound, SignoffError
from ..requests import Request
from ..store import Store
from ..store.outbox_ops import WEBHOOK, OutboxRow, Outcome, lane_of
from ..store.wakeup import ANY, Waiter
from ..store.webhook_ops import Webhook
from .settings import OutboxSettings
from .webhooks import WebhookPoster, event_body, message_id

log = logging.getLogger("signoff.outbox")
WEBHOOK_TTL = 2.0
"""Seconds a webhook read is used for (a removal or a rotation shows within this)."""
RECORD_BURST = 500
"""The most finished attempts written in one transaction."""


class Postponed(Exception):
    """The row is not to be tried now (its notice is not sent yet); no attempt is counted."""


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class DeliveryWorker:
    def __init__(
        self,
        store: Store,
        channels: ChannelRegistry,
        settings: OutboxSettings | None = None,
        *,
        base_url: str = "http://127.0.0.1:8765",
        name: str | None = None,
    ) -> None:
        self.store = store
        self.channels = channels
        self.settings = settings or OutboxSettings()
        self.base_url = base_url.rstrip("/")
        self.name = name or worker_name()
        self._lanes: dict[str, asyncio.Semaphore] = {}
        self._held: Counter[str] = Counter()
        self._tasks: set[asyncio.Task[None]] = set()
        self._runner: asyncio.Task[None] | None = None
        self._recorder: asyncio.Task[None] | None = None
        self._finished: asyncio.Queue[tuple[OutboxRow, Outcome, asyncio.Future[bool]]] = asyncio.Queue()
        self._poster = WebhookPoster()
        self._webhooks: dict[str, tuple[Webhook | None, float]] = {}
        self._room = asyncio.Event()
        self.sent = 0
        """Rows delivered by this worker (for benchmarks and tests)."""

    # -- running -------------------------------------------------------------------------------

    async def start(self) -> None:
        self._finished = asyncio.Queue()
        self._room = asyncio.Event()
        self._recorder = asyncio.create_task(self._record(), name="signoff-outbox-recorder")
        self._runner = asyncio.create_task(self._run(), name="signoff-outbox")

    async def stop(self) -> None:
        if self._runner is not None:
            self._runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._runner
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._recorder is not None:
            self._recorder.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._recorder
        await self._poster.close()

    async def _run(self) -> None:
        waiter = self.store.subscribe_async(ANY)
        trouble: str | None = None
        try:
            while True:
                waiter.clear()
                try:
                    claimed = await self.dispatch_due()
                except SignoffError as exc:
                    if exc.message != trouble:
                        log.warning("the outbox cannot use the store (%s); trying again", exc.message)
                        trouble = exc.message
                    claimed = 0
                except Exception:
                    log.exception("the outbox worker failed; trying again")
                    claimed = 0
                else:
                    trouble = None
                if claimed == 0 or len(self._tasks) >= self.settings.batch:
                    await self._idle(waiter)
        finally:
            self.store.unsubscribe(waiter)

    async def _idle(self, waiter: Waiter) -> None:
        """Wait for a change in the store, a lane with room again, or the poll interval."""
        changed = asyncio.create_task(waiter.wait_async(self.settings.poll))
        room = asyncio.create_task(self._room.wait())
        try:
            await asyncio.wait({changed, room}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (changed, room):
                task.cancel()
            self._room.clear()

    async def dispatch_due(self) -> int:
        """Claim what is due (room permitting) and start sending it; how many rows were claimed.
        A lane holds at most its bound (`queue_factor` × its concurrency): full lanes are not
        claimed for, and rows past a lane's bound go back to the table at once."""
        room = self.settings.batch - len(self._tasks)
        if room <= 0 or not await asyncio.to_thread(self.store.outbox_due):
            return 0
        full = tuple(lane for lane, held in self._held.items() if held >= self._bound(lane))
        rows = await asyncio.to_thread(
            self.store.claim_outbox,
            self.name,
            lease=self.settings.lease,
            limit=room,
            per_lane=self.settings.webhook_concurrency * self.settings.queue_factor,
            full=full,
        )
        surplus = []
        requests = await asyncio.to_thread(self.store.get_requests, list({row.request_id for row in rows}))
        for row in rows:
            lane = lane_of(row)
            if self._held[lane] >= self._bound(lane):
                surplus.append(row)
                continue
            self._held[lane] += 1
            task = asyncio.create_task(
                self._deliver(row, lane, requests.get(row.request_id)), name=f"signoff-outbox-{row.id}"
            )
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        if surplus:
            await asyncio.to_thread(
                self.store.postpone_outboxes, surplus, self.name, until=utcnow() + self.settings.postpone
            )
        return len(rows) - len(surplus)

    def _bound(self, lane: str) -> int:
        return self._concurrency(lane) * self.settings.queue_factor

    def _concurrency(self, lane: str) -> int:
        if lane.startswith("webhook:"):
            return self.settings.webhook_concurrency
        channel = self.channels.get(lane.removeprefix("channel:"))
        return channel.concurrency if channel is not None else 1

    async def drain(self, timeout: float = 10.0) -> None:
        """Send everything due now and wait for it (tests, `signoff channels test`)."""
        give_up = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < give_up:
            claimed = await self.dispatch_due()
            if self._tasks:
                await asyncio.wait(
                    set(self._tasks), timeout=max(0.0, give_up - asyncio.get_running_loop().time())
                )
            elif claimed == 0:
                return

    # -- one row -------------------------------------------------------------------------------

    async def _deliver(self, row: OutboxRow, lane: str, request: Request | None) -> None:
        try:
            semaphore = self._lanes.setdefault(lane, asyncio.Semaphore(self._concurrency(lane)))
            async with semaphore:
                context: dict[str, Any] = {}
                try:
                    outcome = await self._attempt(row, context, request)
                except Postponed:
                    await self._postpone(row)
                    return
        finally:
            self._held[lane] -= 1
            if self._held[lane] == self._bound(lane) // 2:  # half empty: claim more for it
                self._room.set()
        done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._finished.put_nowait((row, outcome, done))
        recorded = await done
        if outcome.state == "sent":
            self.sent += 1
        self._log(row, outcome, context, recorded)

    async def _record(self) -> None:
        """Write finished attempts in bursts: whatever has finished meanwhile shares one
        transaction (one commit), so a fast receiver is not held to one fsync per delivery."""
        while True:
            burst = [await self._finished.get()]
            while not self._finished.empty() and len(burst) < RECORD_BURST:
                burst.append(self._finished.get_nowait())
            try:
                recorded = await asyncio.to_thread(
                    self.store.finish_outbox_many, [(row, outcome) for row, outcome, _ in burst], self.name
                )
            except Exception as exc:  # the rows stay claimed; their lease runs out and they are tried again
                log.warning("could not record %d delivery attempt(s): %s", len(burst), exc)
                recorded = [False] * len(burst)
            for (_, _, done), ok in zip(burst, recorded, strict=True):
                if not done.done():
                    done.set_result(ok)

    async def _postpone(self, row: OutboxRow) -> None:
        await asyncio.to_thread(
            self.store.postpone_outbox, row, self.name, until=utcnow() + self.settings.postpone
        )

    async def _attempt(self, row: OutboxRow, context: dict[str, Any], request: Request | None) -> Outcome:
        """One try. `request` as read when the row was claimed (an update reads it again: it
        renders the final state, which may be newer)."""
        target = row.target or ""
        try:
            if request is None or (row.message != "notice" and row.channel != WEBHOOK):
                request = await asyncio.to_thread(self.store.get_request, row.request_id)
        except RequestNotFound:
            return _skipped(row, target, "the request is gone")
        context["thread"] = request.thread_id
        try:
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
        if webhook is None or webhook.disabled:
            return _skipped(row, target, "the webhook was removed or disabled")
        body = row.body
        if body is None:
            execution = None
            if row.event.startswith("execution."):
                execution = await asyncio.to_thread(self.store.get_execution, row.request_id)
            body = event_body(row.event, request, execution, row.created_at)
        try:
            await self._poster.post(
                webhook, message_id(row.request_id, row.id), body, self.settings.webhook_timeout
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
            return self._failed(
                row, recipient, f"no channel named {row.channel!r} is configured", False, None
            )
        context["platform"] = channel.kind
        target = row.target or await asyncio.to_thread(self.store.address_of, recipient, channel.address_kind)
        if not target:
            return self._failed(
                row,
                recipient,
                f"{recipient} has no {channel.address_kind} address (signoff users set-address)",
                False,
                None,
            )
        context["target"] = target
        locale = _locale(self.channels, row.channel)
        request_url = f"{self.base_url}/requests/{request.id}"
        if row.message == "notice":
            if request.is_terminal:  # it ended before its notice could go: its update says nothing new
                return _skipped(row, target, f"the request was already {request.status.value}")
            link = await self._handle(request, recipient, context)
            notice = build_notice(
                request, approver=recipient, link=link, request_url=request_url, locale=locale
            )
            ref = await asyncio.wait_for(channel.send(notice, target), channel.timeout)
            return Outcome(state="sent", result="sent", target=target, next_at=utcnow(), ref=ref)
        parent = await self._parent(row)
        if parent is None:
            return _skipped(row, target, "its notice was never delivered")
        parent_ref: MessageRef = parent.ref or {}
        new_ref: MessageRef | None
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

    def _log(self, row: OutboxRow, outcome: Outcome, context: dict[str, Any], recorded: bool) -> None:
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


def _locale(channels: ChannelRegistry, name: str) -> Any:
    config = channels.config_of(name)
    return config.locale if config is not None else "en"


__all__ = ["DeliveryWorker", "OutboxSettings", "Postponed"]
