"""The one contract every channel implements (DESIGN §9): Slack, WeCom, Feishu, the text
fallback and email are each a `Channel`.

A channel does four things, and nothing else:

- `send(notice, target)`: show a request's notice to one person's address on the platform;
  returns the platform's reference to the message (Slack `channel` + `ts`, a WeCom
  `response_code`, a mail's `Message-ID`), kept with the outbox row;
- `update(notice, target, ref)`: turn that message into the request's final state ("✅ Approved
  by alice", no live buttons); `notice.final` says how it ended;
- `follow_up(message, target, ref)`: a message after it (the execution's result), threaded
  under the first where the platform can;
- `remind(notice, target, ref)`: remind the person of a request still open (a rule's `remind`),
  in the first message's thread where the platform has threads, else as a new notice;
- `verify(body, headers)`: check an inbound callback (signature, freshness, decryption) and
  parse it into an `Inbound`: a person's action on a request, or a reply the platform needs
  (a URL challenge). A forged or stale callback raises `BadSignature` (401), one that cannot be
  read `BadCallback` (400); nothing is decided then.

And `send_code(message, target)`: a one-time code to an address a person claims, which counts
(is sent notices, and decides) only once the code comes back (DESIGN §9). A channel that
cannot send one leaves such addresses to admins.

The outbox worker calls the first three, retrying what fails (`DeliveryError(retry=...)`) with
backoff; the inbound route calls `verify` and then decides through the server's normal checks
(who the platform user is, whether they are an approver, the first decision wins), so a channel
never decides anything itself. Channels are built from `ChannelConfig` by their kind's factory
(see `registry`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, TypeAlias

from .. import Request
from ..errors import InvalidInput, NotAuthenticated
from .address_code import AddressCode
from .notice import FollowUp, Notice

if TYPE_CHECKING:
    from .. import BatchResult, Decision

MessageRef: TypeAlias = dict[str, Any]
"""What a platform calls a sent message, as JSON (stored with the outbox row and handed back
to `update` and `follow_up`). Each channel decides its keys: `{"channel": "D1", "ts": "17.1"}`."""

InboundKind = Literal["decide", "reply"]
REMINDER_KEY = "reminder_key"
"""In a reminder's `Notice.extra`: the same on every retry of one reminder and different for the
next, for platforms that drop a message sent twice (a Feishu `uuid`, a mail's Message-ID)."""


def reminder_key(notice: Notice) -> str:
    return str(notice.extra.get(REMINDER_KEY) or notice.reminder or "")


class BadSignature(NotAuthenticated):
    """The callback's signature does not verify, or its timestamp is outside the window."""


class BadCallback(InvalidInput):
    """The callback cannot be read."""

    status_code = 400


class DeliveryError(Exception):
    """A send, update or follow-up that did not work. `retry=False` dead-letters the row at
    once (the platform said no for good: an unknown user, a revoked token); otherwise it is
    tried again later, after `retry_after` seconds when the platform said how long."""

    def __init__(self, message: str, *, retry: bool = True, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retry = retry
        self.retry_after = retry_after


def retry_after_seconds(value: str | None) -> float | None:
    """An HTTP `Retry-After` header in seconds (its delta-seconds form; anything else: None)."""
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


@dataclass(frozen=True, kw_only=True)
class Inbound:
    """A verified callback. For `kind == "decide"`: `sender` is the platform's id of the person
    (looked up in the people's verified addresses of `address_kind`), the request is named by
    `request_id` or by `handle` (the id the channel put on its buttons), or by neither (a text
    reply): then by `code`, the reply code its message carried, or, without one, it is that
    person's only open request on this channel (with more than one open, nothing is decided);
    `decision` is a decision payload as the API takes it (`{"type": "reject", "message": ...}`).
    For `kind == "reply"` (a challenge, a help text), `reply` is the body to answer with and
    nothing is decided. `delivery_id` is the platform's id of the callback when it has one
    (an idempotency key: the same callback delivered twice decides once)."""

    kind: InboundKind = "decide"
    sender: str | None = None
    request_id: str | None = None
    handle: str | None = None
    code: str | None = None
    decision: dict[str, Any] | None = None
    reply: Any = None
    delivery_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    """Whatever else the channel needs to answer (a Slack `response_url`, a WeCom `ResponseCode`)."""


InboundResult = Literal[
    "decided",
    "refused",
    "expired",
    "unknown_sender",
    "unknown_request",
    "unknown_code",
    "needs_code",
    "invalid",
]
"""`needs_code`: a text reply without a code while more than one request is open for the sender;
`unknown_code`: a code none of the sender's requests on the channel has. Neither decides."""


@dataclass(frozen=True, kw_only=True)
class InboundOutcome:
    """What came of an `Inbound` decision, for the channel to answer its platform with
    (`Channel.answer`): `result`, and `message`, the words for the person ("Approved.", "You are
    not an approver of this request.", "请求已过期 / the request expired"). For a text reply,
    `choices` are the sender's requests still open on the channel (the one decided left out),
    each `{"code", "tool", "args": [[name, value], ...]}` (its first arguments, redacted), for
    the answer to list."""

    result: InboundResult
    message: str
    request_id: str | None = None
    choices: list[dict[str, Any]] | None = None


class CallbackHost(Protocol):
    """What the server's callback route offers a channel that answers a callback itself
    (`Channel.handle`). Everything goes through the server's own checks and audit: the channel
    never decides, and never sees the server's internals."""

    async def decide(self, channel: Channel, inbound: Inbound) -> InboundOutcome:
        """Decide what `inbound` says, as the person who sent it (only approvers, the first
        decision wins, audited); what came of it."""
        ...

    async def request_to_decide(self, channel: Channel, inbound: Inbound) -> Request | InboundOutcome:
        """The request `inbound` is about (by `request_id`) if its sender may decide it now;
        else why not, as the outcome to answer with (refusals audited). For opening a form."""
        ...

    async def request(self, request_id: str) -> Request:
        """The request as it is now (`RequestNotFound` when there is none)."""
        ...

    async def batch_candidates(
        self, channel: Channel, inbound: Inbound, request: Request, *, limit: int
    ) -> tuple[list[Request], int]:
        """The open requests like `request` that the sender of `inbound` (its approver, checked
        already) may approve in one batch, the oldest `limit` of them, and how many there are
        (`batch.open_like`). For a chat's "approve all like this"."""
        ...

    async def decide_batch(
        self, channel: Channel, inbound: Inbound, ids: tuple[str, ...], decision: Decision
    ) -> BatchResult | InboundOutcome:
        """`decision` on each of `ids` as the sender of `inbound`, through the batch's own path
        (each request with every check of a single decision, the refused skipped and named);
        or why not at all (a sender not placed, a batch refused whole: audited)."""
        ...


class Channel(ABC):
    """One configured channel. Subclasses set `kind`, and `address_kind` when a person's
    address for it is not simply `kind` (a text fallback on WeChat: `text:wechat`)."""

    kind: ClassVar[str]
    """The channel's type: slack, wecom, feishu, email, text, webhook."""
    timeout: float = 10.0
    """Seconds one send, update or follow-up may take before it counts as failed (and retried)."""
    concurrency: int = 8
    """How many of this channel's deliveries may be under way at once: a slow platform queues
    its own rows and never holds up other channels."""
    reply_codes: ClassVar[bool] = False
    """Whether its notices carry the request's reply code (`Notice.code`): a channel whose
    replies name no request (the text fallback) needs one to tell the requests apart."""

    def __init__(self, name: str) -> None:
        self.name = name

    @property
    def address_kind(self) -> str:
        """Which of a person's addresses this channel sends to (`signoff users set-address`)."""
        return self.kind

    @abstractmethod
    async def send(self, notice: Notice, target: str) -> MessageRef:
        """Show `notice` to the person whose address here is `target`; the message's reference."""

    async def update(self, notice: Notice, target: str, ref: MessageRef) -> MessageRef | None:
        """Turn the sent message into `notice.final`. By default a new message says it (for
        platforms that cannot edit what they sent); returns a new reference, or None."""
        return await self.send(notice, target)

    async def follow_up(self, message: FollowUp, target: str, ref: MessageRef) -> MessageRef | None:
        """Send `message` after the notice (under it where the platform threads). Default: nothing."""
        return None

    async def remind(self, notice: Notice, target: str, ref: MessageRef) -> MessageRef | None:
        """Remind the person of `notice` (its `reminder` says so), the first message being `ref`.
        By default the notice is sent anew, its title led by the reminder."""
        return await self.send(replace(notice, title=f"{notice.reminder} · {notice.title}"), target)

    async def send_code(self, message: AddressCode, target: str) -> MessageRef:
        """Send a verification code to `target`, an address `message.user` claims. By default
        the channel cannot (the row is dead-lettered): an admin sets such addresses."""
        raise DeliveryError(
            f"channel {self.name} ({self.kind}) cannot send verification codes: an admin can set the address",
            retry=False,
        )

    def verify(self, body: bytes, headers: Mapping[str, str]) -> Inbound:
        """Check and parse an inbound callback (headers' names lower-case). Raises `BadSignature`
        or `BadCallback`. Channels without callbacks (email: its links are handles) keep this."""
        raise BadCallback(f"channel {self.name} takes no callbacks")

    async def handle(self, host: CallbackHost, inbound: Inbound) -> tuple[int, Any] | None:
        """A verified callback the channel answers whole, through what the server offers it
        (`host`): Slack opens modals and reads their submissions. None (the default) leaves it
        to the shared path: decide (`host.decide`), then `answer`. A (status, None) answer is an
        empty body."""
        return None

    def answer(self, inbound: Inbound, outcome: InboundOutcome | None) -> tuple[int, Any]:
        """The HTTP status and JSON body to answer the callback with: `inbound.reply` for a
        reply, else `{"ok": ..., "message": ...}`. Platforms with their own answer shapes
        (Slack's ephemeral message, WeCom's encrypted reply) override this."""
        if outcome is None:
            return 200, inbound.reply
        return 200, {"ok": outcome.result == "decided", "message": outcome.message}

    async def close(self) -> None:  # noqa: B027 - most channels hold nothing to close
        """Release what the channel holds (HTTP clients, connections)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"
