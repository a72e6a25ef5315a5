"""`recording`: a channel that keeps what it is given, in memory. For tests, benchmarks and
trying routing out before a real platform is configured (`kind: recording`). Settings:
`address_kind` (which address of a person it sends to; default `recording`), `fail` (how many
sends fail before they work), `hang` (seconds each send waits first), `secret` (callbacks must
carry `x-recording-signature: hex(hmac_sha256(secret, body))`).

Its callbacks are JSON: `{"sender": "U1", "decision": {"type": "approve"}, "request_id": …,
"handle": …, "code": …, "id": …}` (`request_id`, `handle` and `code`, a reply code, optional;
`id` the delivery's id), or `{"challenge": "x"}`, answered with itself."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .address_code import AddressCode
from .contract import BadCallback, BadSignature, Channel, DeliveryError, Inbound, MessageRef
from .notice import FollowUp, Notice
from .registry import ChannelConfig

SIGNATURE_HEADER = "x-recording-signature"


def sign(secret: str, body: bytes) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Recorded:
    action: str
    """send, update, follow_up, remind or code."""
    target: str
    notice: Notice | None
    follow_up: FollowUp | None
    ref: MessageRef | None
    code: AddressCode | None = None


class RecordingChannel(Channel):
    kind = "recording"

    def __init__(
        self,
        name: str = "recording",
        *,
        address_kind: str = "recording",
        fail: int = 0,
        hang: float = 0.0,
        secret: str | None = None,
    ) -> None:
        super().__init__(name)
        self.secret = secret
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
            secret=config.secret("secret") if config.setting("secret") else None,
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

    async def remind(self, notice: Notice, target: str, ref: MessageRef) -> MessageRef | None:
        await self._attempt()
        self.recorded.append(Recorded("remind", target, notice, None, ref))
        return None

    async def send_code(self, message: AddressCode, target: str) -> MessageRef:
        await self._attempt()
        ref: dict[str, Any] = {"n": len(self.recorded) + 1}
        self.recorded.append(Recorded("code", target, None, None, ref, message))
        return ref

    def verify(self, body: bytes, headers: Mapping[str, str]) -> Inbound:
        if self.secret is not None:
            given = headers.get(SIGNATURE_HEADER, "")
            if not hmac.compare_digest(given, sign(self.secret, body)):
                raise BadSignature("the recording channel's signature does not verify")
        try:
            data = json.loads(body)
        except ValueError:
            raise BadCallback("the callback is not JSON") from None
        if not isinstance(data, dict):
            raise BadCallback("the callback is not a JSON object")
        if "challenge" in data:
            return Inbound(kind="reply", reply={"challenge": data["challenge"]})
        decision = data.get("decision")
        if not isinstance(decision, dict) or not isinstance(data.get("sender"), str):
            raise BadCallback("a callback names its sender and decision")
        return Inbound(
            sender=data["sender"],
            request_id=data.get("request_id"),
            handle=data.get("handle"),
            code=data.get("code"),
            decision=decision,
            delivery_id=data.get("id"),
        )
