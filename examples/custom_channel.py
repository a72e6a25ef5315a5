"""A signoff channel of your own: each request posted to "Acme Pager" as JSON, its signed answers
read back. It is the module `acme_signoff/channel.py` of a package that registers it:

    [project.entry-points."signoff.channels"]
    acme = "acme_signoff.channel:AcmeChannel"

and a channels file then configures one (`kind: acme`, its `url` and `signing_secret`); people set
their address on it (`signoff users set-address alice --address acme:U-ALICE`).

The channel contract (`signoff.channels.contract.Channel`), of which this is the least:

- `send(notice, target)`: show a request's notice to the person whose address is `target`; return
  the platform's reference to the message. An exception (or `DeliveryError`) is retried by the
  outbox with backoff; `DeliveryError(retry=False)` gives up for good;
- `update(notice, target, ref)`: turn that message into the request's final state
  (`notice.final.text`: "✅ Approved by alice"), no live choices left;
- `verify(body, headers)`: check what comes back (the signature, and the freshness where the
  platform signs a timestamp) and parse it into an `Inbound`: who acted, on which request, with
  which decision. A forged one raises `BadSignature` (401, audited), one it cannot read
  `BadCallback` (400). The channel never decides: the server's callback route
  (`POST /channels/{name}/callback`) decides as the person whose verified address the sender is,
  through the same checks as the inbox (an approver, the first decision wins, audited);
- optionally `follow_up`, `remind`, `answer` (the platform's reply format) and `handle`, for a
  callback it answers whole through the server's `CallbackHost` (Slack's modals).

It uses signoff's public API, `signoff.channels` and `signoff.presentation` (what the inbox shows:
cards, form fields, refusal texts), never the server's modules.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from collections.abc import Mapping

import httpx

from signoff.channels.contract import BadCallback, BadSignature, Channel, Inbound, MessageRef
from signoff.channels.notice import Notice
from signoff.channels.registry import ChannelConfig


class AcmeChannel(Channel):
    kind = "acme"

    def __init__(self, name: str, url: str, secret: str) -> None:
        super().__init__(name)
        self.url, self.secret = url, secret

    @classmethod
    def from_config(cls, config: ChannelConfig) -> AcmeChannel:
        return cls(config.name, config.required("url"), config.secret("signing_secret"))

    async def post(self, message: dict[str, object]) -> None:
        answer = await asyncio.to_thread(httpx.post, self.url, json=message, timeout=self.timeout)
        answer.raise_for_status()  # an error is retried by the outbox, with backoff

    async def send(self, notice: Notice, target: str) -> MessageRef:
        message = {"to": target, "request": notice.request_id, "title": notice.title}
        await self.post({**message, "args": notice.args, "choices": list(notice.decisions)})
        return {"to": target}

    async def update(self, notice: Notice, target: str, ref: MessageRef) -> MessageRef | None:
        assert notice.final is not None  # "✅ Approved by alice"
        final = {"to": target, "request": notice.request_id, "title": notice.final.text}
        await self.post({**final, "choices": []})
        return ref

    def verify(self, body: bytes, headers: Mapping[str, str]) -> Inbound:
        signature = hmac.new(self.secret.encode(), body, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(signature, headers.get("x-acme-signature", "")):
            raise BadSignature("the Acme signature does not verify")
        try:
            data = json.loads(body)
            decision = {"type": data["decision"]}
            return Inbound(sender=data["from"], request_id=data["request"], decision=decision)
        except (ValueError, KeyError, TypeError):
            raise BadCallback("not an Acme answer") from None
