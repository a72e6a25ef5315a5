"""Sending a test message on a channel ("send a test" in the inbox, `POST /v1/channels/{name}/test`,
`signoff channels test`): a notice about nothing to decide, straight through the channel (not the
outbox), and what the platform answered or why it failed, in time."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .. import Request, RequestRule, RequestStatus
from .contract import Channel
from .notice import Notice, build_notice

TEST_TEXT = "A test message from signoff: if you can read this, the channel works."


@dataclass(frozen=True, kw_only=True)
class Trial:
    ok: bool
    channel: str
    kind: str
    """The channel's kind (`webhook` for a webhook)."""
    target: str
    ref: dict[str, Any] | None
    """What the platform called the message (its id), when it was sent."""
    error: str | None
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "channel": self.channel,
            "kind": self.kind,
            "target": self.target,
            "ref": self.ref,
            "error": self.error,
            "seconds": round(self.seconds, 3),
        }


async def send_test(channel: Channel, target: str, person: str | None = None) -> Trial:
    """Send the test notice to `target` (the address of `person`, when one was named), within
    the channel's timeout. The channel stays open: whoever built it closes it."""
    started = time.perf_counter()
    ref: dict[str, Any] | None = None
    error = None
    try:
        ref = await asyncio.wait_for(channel.send(trial_notice(person), target), channel.timeout)
    except TimeoutError:
        error = f"no answer within {channel.timeout:g}s"
    except Exception as exc:  # whatever the platform or its library said, reported as it is
        error = f"{type(exc).__name__}: {exc}"
    return Trial(
        ok=error is None,
        channel=channel.name,
        kind=channel.kind,
        target=target,
        ref=ref,
        error=error,
        seconds=time.perf_counter() - started,
    )


def trial_notice(person: str | None) -> Notice:
    now = datetime.now(UTC)
    request = Request(
        id="req_test",
        thread_id="signoff-channels-test",
        tool_call_id="test",
        kind="tool",
        tool_name="signoff.test",
        tool_description=None,
        args={"note": "A test message from signoff: nothing to decide."},
        args_schema=None,
        answer_schema=None,
        agent=None,
        app=None,
        requester=None,
        status=RequestStatus.PENDING,
        description=TEST_TEXT,
        rule=RequestRule(allowed_decisions=("approve", "reject")),
        created_at=now,
        updated_at=now,
        deadline=now,
    )
    return build_notice(request, approver=person, link=None, request_url="")
