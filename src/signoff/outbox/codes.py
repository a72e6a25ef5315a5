"""Sending a verification code (an outbox `code` row, see `store.address_codes`).

The code is made as it is sent (`Store.issue_address_code` keeps only its hash), so it is never
stored and its lifetime starts when it goes out; a retry sends a new code, which replaces the
last (its message id is new too, so a platform that drops repeats does not drop it). A claim
that was dropped, changed or verified meanwhile is skipped: nothing is sent."""

from __future__ import annotations

import asyncio
from typing import Any

from .._util import utcnow
from ..channels.address_code import build_address_code
from ..channels.contract import DeliveryError
from ..channels.registry import ChannelRegistry
from ..store import Store
from ..store.outbox_ops import OutboxRow, Outcome


async def send_code(
    store: Store, channels: ChannelRegistry, row: OutboxRow, context: dict[str, Any]
) -> Outcome:
    target, user = row.target or "", row.recipient or ""
    channel = channels.get(row.channel)
    if channel is None:
        raise DeliveryError(channels.why_not(row.channel), retry=False)
    context["platform"] = channel.kind
    context["target"] = target
    issued = await asyncio.to_thread(
        store.issue_address_code, user, channel.address_kind, target, via=row.channel, outbox_id=row.id
    )
    if issued is None:
        why = f"{user}'s {channel.address_kind} address is no longer {target!r} waiting for a code"
        return Outcome(
            state="skipped", result="skipped", target=target, next_at=utcnow(), error=why, counts=False
        )
    config = channels.config_of(row.channel)
    message = build_address_code(
        code=issued.code,
        user=user,
        address=target,
        expires_at=issued.expires_at,
        id=issued.id,
        locale=config.locale if config is not None else "en",
    )
    ref = await asyncio.wait_for(channel.send_code(message, target), channel.timeout)
    return Outcome(state="sent", result="sent", target=target, next_at=utcnow(), ref=ref)
