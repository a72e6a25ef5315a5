"""One structured log line per inbound action on a channel (a click, a reply, a refused callback),
written by the server's callback route and by a channel that answers a callback itself."""

from __future__ import annotations

import logging
from typing import Any

from .contract import Channel, Inbound

log = logging.getLogger("signoff.channels")


def log_inbound(
    channel: Channel,
    inbound: Inbound | None,
    request_id: str | None,
    result: str,
    *,
    thread: str | None = None,
    why: str | None = None,
) -> None:
    """One line per inbound action: thread, request, handle, platform, result."""
    fields: dict[str, Any] = {
        "thread": thread,
        "request": request_id,
        "handle": inbound.handle if inbound else None,
        "platform": channel.kind,
        "channel": channel.name,
        "sender": inbound.sender if inbound else None,
        "code": inbound.code if inbound else None,
        "decision": (inbound.decision or {}).get("type") if inbound else None,
        "result": result,
    }
    text = " ".join(f"{key}={value}" for key, value in fields.items() if value is not None)
    if why:
        text += f" why={why!r}"
    level = logging.INFO if result == "decided" else logging.WARNING
    log.log(level, "approval callback: %s", text, extra={"signoff": fields})
