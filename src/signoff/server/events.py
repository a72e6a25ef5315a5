"""The live event stream (`GET /v1/events`, Server-Sent Events).

The audit log is the event log: every change to a request appends an entry with a sequence
number, whichever process made it. One feed per server tails the log (woken by the store's
any-change signal: in-process commits, SQLite's data_version, PostgreSQL NOTIFY; and every
second regardless), turns request entries into events and hands each to the open streams whose
user may see that request. An event's SSE id is its audit sequence number, so a client that
reconnects with `Last-Event-ID` gets what it missed from the log itself; a stream names the
point it starts from (an `id:` line without data) as soon as it opens.

The feed reads only what its followers may see (DESIGN §11): with an admin's or a person's
stream open, every request's changes; with agents' streams only, the changes to their own
requests (the NOTIFY names each request's creator, so the others' cost no read at all); with no
stream open, nothing, and it is not even told of changes: it leaves the store's wake-ups, so on
SQLite the change watcher idles instead of reading every commit's log entries for nobody. What it
leaves unread lies past `last_seq`, so a stream that opens then starts at the log's head
(`start_point`), and one that resumes from before gets it from the log.

A stream ends, and its client resumes by `Last-Event-ID`, when its client reads too slowly for
its queue (the feed never waits for one reader), and when its caller no longer holds: the token
revoked, the session signed out, the user disabled. The caller is checked again at least every
`CALLER_CHECK_SECONDS` and before each event, so leaving an approver group also stops the
events of that group's requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..audit import AuditEntry
from ..identity import User
from ..requests import Request
from ..store import Store
from ..store.wakeup import ANY, Changes
from .access import can_see, request_view
from .followers import Followers
from .limits import MAX_INTEGER

log = logging.getLogger("signoff.server")

EVENT_OF_ACTION = {
    "request.created": "created",
    "request.updated": "updated",
    "request.ready": "updated",
    "decision.vote": "updated",
    "execution.started": "updated",
    "execution.succeeded": "updated",
    "execution.failed": "updated",
    "execution.in_doubt": "updated",
    "execution.reset": "updated",
    "request.reminded": "updated",
    "request.escalated": "updated",  # its new approvers may see it now: their inboxes place it
    "request.decided": "decided",
    "request.expired": "expired",
    "request.cancelled": "cancelled",
}
KEEPALIVE_SECONDS = 15.0
QUEUE_LIMIT = 2000
"""Events waiting for one stream's reader; past this its stream ends (it resumes by Last-Event-ID)."""
CALLER_CHECK_SECONDS = 2.0
"""An open stream checks its caller again at least this often (and before each event)."""
RECHECK_SECONDS = 1.0
BATCH_SECONDS = 0.005
"""After each read of the log, let changes gather this long, so a burst is read at once."""
BATCH = 500
"""Log entries read at once."""
KNOWN_LIMIT = 4096
"""At most this many requests changed by this server wait for their log entries."""


@dataclass(frozen=True)
class Event:
    seq: int
    type: str
    action: str
    request: Request

    def encode(self, user: User) -> str:
        data = {
            "seq": self.seq,
            "type": self.type,
            "action": self.action,
            "request": request_view(self.request, user, brief=True),
        }
        return f"id: {self.seq}\nevent: {self.type}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


CallerCheck = Callable[[], Awaitable[User | None]]
"""The stream's caller as they are now (groups included), or None once their credential is gone."""


@dataclass(eq=False)
class Subscription:
    user: User
    queue: asyncio.Queue[Event | None]
    on_created: Callable[[Event], None] | None = None
    overflowed: bool = False
    """Its reader fell `queue_limit` events behind: dropped from the feed, its stream ends."""


class EventFeed:
    def __init__(
        self,
        store: Store,
        *,
        on_decided: Callable[[Request], None] | None = None,
        queue_limit: int = QUEUE_LIMIT,
    ) -> None:
        self.store = store
        self.queue_limit = queue_limit
        self.last_seq = 0
        self._subscriptions: set[Subscription] = set()
        self._on_decided = on_decided
        self._behind = False
        """Changes came while nobody subscribed and were not read: `last_seq` is not the head."""
        self._moving = asyncio.Lock()
        self._last_read = 0.0
        """When the feed last read the log (monotonic clock)."""
        self._skipped = False
        """Changes nobody here may see were left unread: the log's head may be past `last_seq`."""
        self._task: asyncio.Task[None] | None = None
        self._followed = asyncio.Event()
        """Set while some stream subscribes: the feed listens for changes only then."""
        self._known: dict[tuple[str, str], Request] = {}
        self._known_lock = threading.Lock()

    async def start(self) -> None:
        self.last_seq = await asyncio.to_thread(self.store.audit_head_seq)
        self._task = asyncio.create_task(self._run(), name="signoff-event-feed")

    async def stop(self) -> None:
        for subscription in list(self._subscriptions):
            with contextlib.suppress(asyncio.QueueFull):
                subscription.queue.put_nowait(None)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def subscribe(self, user: User, *, on_created: Callable[[Event], None] | None = None) -> Subscription:
        subscription = Subscription(user, asyncio.Queue(self.queue_limit), on_created=on_created)
        self._subscriptions.add(subscription)
        self._followed.set()
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        self._subscriptions.discard(subscription)
        if not self._subscriptions:
            self._followed.clear()

    def remember(self, action: str, request: Request) -> None:
        """A change this server made itself (`request.created`, `request.decided`): when its log
        entry arrives, the event carries `request` rather than a copy read back from the store.
        Only for actions that happen once per request, whose state right after is `request`.
        `on_decided` hears of each decision here: the decisions made through this server."""
        if action == "request.decided" and self._on_decided is not None:
            self._on_decided(request)
        if not self._subscriptions:  # nobody follows: the entry will not be read
            return
        with self._known_lock:
            self._known[(request.id, action)] = request
            if len(self._known) > KNOWN_LIMIT:
                del self._known[next(iter(self._known))]

    def _take_known(self, entry: AuditEntry) -> Request | None:
        with self._known_lock:
            return self._known.pop((entry.request_id or "", entry.action), None)

    async def _run(self) -> None:
        while True:
            self._behind = True  # nobody follows: changes from now on go unread
            await self._followed.wait()
            await self._follow()

    async def _follow(self) -> None:
        """Tail the log while some stream subscribes. Subscribed to the store's wake-ups first,
        then read once whatever came: a change committed meanwhile is read or wakes the feed."""
        waiter = self.store.subscribe_async(ANY)
        changes: Changes | None = None  # the first read is of everything
        try:
            while self._subscriptions:
                waiter.clear()
                try:
                    await self._catch_up(changes)
                except Exception:  # a failing read must not end the feed; try again shortly
                    log.exception("the event feed could not read the audit log")
                changes = waiter.changes
                await asyncio.sleep(BATCH_SECONDS)
                await waiter.wait_async(RECHECK_SECONDS)
        finally:
            self.store.unsubscribe(waiter)

    async def _catch_up(self, changes: Changes | None) -> None:
        """Read the log past `last_seq` for what the followers may see: when a change they may
        see was noted, and at least every `RECHECK_SECONDS` (for changes nobody was told of).
        Streams take their start point under the same lock, so one that subscribes while a read
        runs starts where it ended."""
        everything, changed = changes.take() if changes is not None else (True, {})
        async with self._moving:
            followers = Followers.of(subscription.user for subscription in self._subscriptions)
            if followers.nobody:
                self._behind = True
                return
            due = time.monotonic() - self._last_read >= RECHECK_SECONDS
            if not (everything or due or any(followers.want(creator) for creator in changed.values())):
                self._skipped = True  # nobody here may see these: they stay unread past `last_seq`
                return
            await self._move_to_head_if_behind()
            self._last_read = time.monotonic()
            self._skipped = False
            while True:
                events, last, full = await asyncio.to_thread(self.read_events, self.last_seq, followers)
                self.last_seq = max(self.last_seq, last)
                for event in events:
                    self._publish(event)
                if not full:
                    return

    def read_events(
        self, after: int, followers: Followers, upto: int | None = None
    ) -> tuple[list[Event], int, bool]:
        """The events after `after` (up to `upto`) that `followers` may see, how far the log was
        read, and whether there may be more."""
        entries, last = self.store.audit_events(
            after=after, actions=EVENT_OF_ACTION, creators=followers.creators_filter(), limit=BATCH, upto=upto
        )
        return self._events_of(entries), last, len(entries) == BATCH

    def _events_of(self, entries: list[AuditEntry]) -> list[Event]:
        """The entries as events, each with its request: the one this server remembered, or
        read (in one read for all)."""
        entries = [entry for entry in entries if entry.request_id is not None]
        known = [self._take_known(entry) for entry in entries]
        requests = self.store.get_requests(
            [
                entry.request_id
                for entry, request in zip(entries, known, strict=True)
                if request is None and entry.request_id
            ]
        )
        events = []
        for entry, request in zip(entries, known, strict=True):
            if request is None:
                request = requests.get(entry.request_id or "")
            if request is not None:
                events.append(Event(entry.seq, EVENT_OF_ACTION[entry.action], entry.action, request))
        return events

    async def _move_to_head_if_behind(self) -> None:
        """After a pause with nobody following, start from the log's end: nobody here wanted
        what happened meanwhile (hold `_moving`)."""
        if self._behind:
            head = await asyncio.to_thread(self.store.audit_head_seq)
            self.last_seq = max(self.last_seq, head)
            self._behind = False

    async def start_point(self) -> int:
        """Where a stream that subscribed now starts (call after subscribing): the log's head
        when the feed has left changes unread (nobody following, or none they may see), else
        the feed's position. Either way the feed publishes every later change the stream may see."""
        async with self._moving:
            await self._move_to_head_if_behind()
            if self._skipped:
                return max(self.last_seq, await asyncio.to_thread(self.store.audit_head_seq))
            return self.last_seq

    def position(self) -> int:
        """The log position a page rendered now may follow from (a stream resumes after it)."""
        if self._behind or self._skipped:
            return max(self.last_seq, self.store.audit_head_seq())
        return self.last_seq

    def _publish(self, event: Event) -> None:
        for subscription in list(self._subscriptions):
            if not can_see(event.request, subscription.user):
                continue
            try:
                subscription.queue.put_nowait(event)
            except asyncio.QueueFull:  # a stalled reader: end its stream; it resumes by Last-Event-ID
                subscription.overflowed = True
                self._subscriptions.discard(subscription)
                continue
            if event.type == "created" and subscription.on_created is not None:
                subscription.on_created(event)

    async def stream(
        self,
        user: User,
        *,
        after: int | None,
        on_created: Callable[[Event], None] | None = None,
        check_caller: CallerCheck | None = None,
    ) -> AsyncIterator[str]:
        """The SSE text for one client: missed events since `after` (from the log), the point
        reached, then live ones, until the client falls behind or `check_caller` says it is gone."""
        subscription = self.subscribe(user, on_created=on_created)
        try:
            start = await self.start_point()
            yield "retry: 2000\n\n"
            if after is not None and after < start:
                cursor, caller = after, Followers.of([user])
                while cursor < start:
                    events, last, _ = await asyncio.to_thread(self.read_events, cursor, caller, start)
                    for event in events:
                        if can_see(event.request, user):
                            yield event.encode(user)
                    if last <= cursor:
                        break
                    cursor = last
            yield f"id: {start}\n\n"
            clock = asyncio.get_running_loop().time
            next_keepalive = clock() + KEEPALIVE_SECONDS
            next_check = clock() + CALLER_CHECK_SECONDS if check_caller is not None else float("inf")
            while not subscription.overflowed:
                if clock() >= next_check:
                    if not await _still_there(subscription, check_caller):
                        return
                    next_check = clock() + CALLER_CHECK_SECONDS
                if clock() >= next_keepalive:
                    yield ": keepalive\n\n"
                    next_keepalive = clock() + KEEPALIVE_SECONDS
                try:
                    item = await asyncio.wait_for(
                        subscription.queue.get(), max(min(next_keepalive, next_check) - clock(), 0.0)
                    )
                except TimeoutError:
                    continue
                if item is None:
                    return
                if item.seq <= start or subscription.overflowed:
                    continue
                if check_caller is not None:
                    if not await _still_there(subscription, check_caller):
                        return
                    if not can_see(item.request, subscription.user):
                        continue
                yield item.encode(subscription.user)
        finally:
            self.unsubscribe(subscription)


async def _still_there(subscription: Subscription, check_caller: CallerCheck | None) -> bool:
    """Whether the stream's caller still holds; if so, the subscription follows their groups."""
    if check_caller is None:
        return True
    try:
        user = await check_caller()
    except Exception:  # the caller cannot be checked now: end the stream; the client comes back
        log.warning("could not check an event stream's caller; ending the stream", exc_info=True)
        return False
    if user is None:
        return False
    subscription.user = user
    return True


def parse_last_event_id(value: Any) -> int | None:
    """A `Last-Event-ID` as an audit sequence number; None (start from now) for anything that
    cannot be one: not a number, negative, or past what the store's integers hold."""
    if value is None or value == "":
        return None
    try:
        number = int(str(value).strip())
    except ValueError:
        return None
    return number if 0 <= number <= MAX_INTEGER else None
