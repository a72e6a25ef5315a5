"""Outbound webhooks, signed per Standard Webhooks (`standardwebhooks`, the extra
`signoff[webhooks]`): `webhook-id` (the same on every retry: receivers deduplicate by it),
`webhook-timestamp`, and `webhook-signature` with one `v1,` signature per secret the webhook has
(several during a rotation). The body is fixed at the first attempt and kept, so that every
retry sends the same bytes under the same id."""

from __future__ import annotations

import json
import secrets
import time
from datetime import UTC, datetime
from typing import Any

from ..channels.contract import DeliveryError, retry_after_seconds
from ..channels.trial import TEST_TEXT, Trial
from ..destinations import Destinations
from ..destinations.masking import masked_in
from ..errors import InvalidInput
from ..requests import Execution, Request
from ..store.webhook_ops import Webhook

USER_AGENT = "signoff-webhooks/1"
TEST_EVENT = "webhook.test"
"""The type of the event "send a test" sends (no request is about it)."""


def message_id(request_id: str, outbox_id: int) -> str:
    """The event's `webhook-id`: stable across retries, unique across databases."""
    return f"msg_{request_id.removeprefix('req_')}_{outbox_id}"


def event_body(event: str, request: Request, execution: Execution | None, at: datetime) -> str:
    """The event as JSON: `{"type", "timestamp", "data": {"request": <the request, args redacted>,
    "execution": ...}}` (Standard Webhooks' recommended shape)."""
    data: dict[str, Any] = {"request": request.to_dict()}
    if event.startswith("execution.") and execution is not None:
        data["execution"] = execution.to_dict()
    body = {"type": event, "timestamp": at.astimezone(UTC).isoformat(), "data": data}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), default=str)


def signed_headers(webhook: Webhook, msg_id: str, body: str, now: datetime | None = None) -> dict[str, str]:
    try:
        from standardwebhooks import Webhook as Signer
    except ImportError:
        raise DeliveryError(
            "signing webhooks needs the extra: pip install 'signoff[webhooks]'", retry=False
        ) from None
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    signatures = " ".join(Signer(secret).sign(msg_id, moment, body) for secret in webhook.secrets)
    return {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(moment.timestamp())),
        "webhook-signature": signatures,
    }


class WebhookPoster:
    """POSTs events with one `aiohttp` session (keep-alive connections per receiver; httpx's
    asyncio pool managed a tenth of the rate on the benchmark's machine), made at the first
    event, so a server without webhooks needs no aiohttp. Its connections go only where
    `destinations` allows (checked after resolving, at every connection), and never follow a
    redirect (a 3xx is a failed delivery)."""

    def __init__(self, destinations: Destinations | None = None) -> None:
        self.destinations = destinations or Destinations()
        self._session: Any = None

    async def post(self, webhook: Webhook, msg_id: str, body: str, timeout: float) -> None:
        """POST one event; a 2xx answer delivers it. 410 Gone stops (the receiver says it is
        gone for good), as does a destination that is not allowed; anything else is retried,
        after Retry-After when the receiver gives one."""
        try:
            import aiohttp

            from ..destinations.guarded_aiohttp import connector, refusal_in
        except ImportError:
            raise DeliveryError(
                "sending webhooks needs the extra: pip install 'signoff[webhooks]'", retry=False
            ) from None
        try:
            self.destinations.check_url(webhook.url)
        except InvalidInput as exc:
            raise DeliveryError(masked_in(exc.message, webhook.url), retry=False) from None
        headers = signed_headers(webhook, msg_id, body)
        if self._session is None:
            guarded = connector(self.destinations, limit=256, limit_per_host=64)
            self._session = aiohttp.ClientSession(connector=guarded)
        try:
            async with self._session.post(
                webhook.url,
                data=body.encode(),
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=timeout),
                allow_redirects=False,
            ) as answer:
                await answer.read()
                status = answer.status
                retry_after = answer.headers.get("retry-after")
        except TimeoutError:
            raise DeliveryError(f"no answer within {timeout:g}s") from None
        except aiohttp.ClientError as exc:
            refused = refusal_in(exc)
            if refused is not None:
                raise DeliveryError(refused.message, retry=False) from None
            said = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            raise DeliveryError(masked_in(said, webhook.url)) from None
        if 200 <= status < 300:
            return
        if status == 410:
            raise DeliveryError("the receiver answered 410 Gone", retry=False)
        raise DeliveryError(f"the receiver answered {status}", retry_after=retry_after_seconds(retry_after))

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


async def send_test_event(webhook: Webhook, *, destinations: Destinations, timeout: float) -> Trial:
    """POST a signed `webhook.test` event to the webhook now (not through the outbox), as its
    events go: the same signature, the same destination checks; what came of it."""
    msg_id = f"msg_test_{secrets.token_hex(8)}"
    data = {"webhook": webhook.id, "message": TEST_TEXT}
    body = json.dumps({"type": TEST_EVENT, "timestamp": datetime.now(UTC).isoformat(), "data": data})
    poster = WebhookPoster(destinations)
    started = time.perf_counter()
    error = None
    try:
        await poster.post(webhook, msg_id, body, timeout)
    except DeliveryError as exc:
        error = exc.message
    finally:
        await poster.close()
    return Trial(
        ok=error is None,
        channel=webhook.id,
        kind="webhook",
        target=webhook.shown_url,
        ref={"webhook-id": msg_id},
        error=error,
        seconds=time.perf_counter() - started,
    )
