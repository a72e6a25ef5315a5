"""`recording`: a channel that keeps what it is given, in memory. For tests, benchmarks and
trying routing out before a real platform is configured (`kind: recording`). Settings:
`address_kind` (which address of a person it sends to; default `recording`), `fail` (how many
sends fail before they work), `hang` (seconds each send waits first)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from .contract import Channel, DeliveryError, MessageRef
from .notice import FollowUp, Notice
from .registry import ChannelConfig


@dataclass(frozen=True)
class Recorded:
    action: str
    """send, update or follow_up."""
    target: str
    notice: Notice | None
    follow_up: FollowUp | None
    ref: MessageRef | None


class RecordingChannel(Channel):
    kind = "recording"

    def __init__(
        self, name: str = "recording", *, address_kind: str = "recording", fail: int = 0, hang: float = 0.0
    ) -> None:
        super().__init__(name)
        self._address_kind = address_kind
        self.fail = fail
        self.hang = hang
        self.recorded: list[Recorded] = []
        self.attempts = 0

    @classmethod
    def from_config(cls, config: ChannelConfig) -> RecordingChannel:
        return cls(
            config.name,
            address_kind=str(config.setting("address_kind", "recording")),
            fail=int(config.setting("fail", 0)),
            hang=float(config.setting("hang", 0.0)),
        )

    @property
    def address_kind(self) -> str:
        return self._address_kind

    async def _attempt(self) -> None:
        self.attempts += 1
        if self.hang:
            await asyncio.sleep(self.hang)
        if self.fail > 0:
            self.fail -= 1
            raise DeliveryError("failing on purpose (recording channel)")

    async def send(self, notice: Notice, target: str) -> MessageRef:
        await self._attempt()
        ref: dict[str, Any] = {"n": len(self.recorded) + 1}
        self.recorded.append(Recorded("send", target, notice, None, ref))
        return ref

    async def update(self, notice: Notice, target: str, ref: MessageRef) -> MessageRef | None:
        await self._attempt()
        self.recorded.append(Recorded("update", target, notice, None, ref))
        return None

    async def follow_up(self, message: FollowUp, target: str, ref: MessageRef) -> MessageRef | None:
        await self._attempt()
        self.recorded.append(Recorded("follow_up", target, None, message, ref))
        return None
