"""What a text-fallback reply means, and the words it is answered with.

`parse_reply` reads a reply: `1`, `批准`, `approve`, `y`, `yes` approve; `2`, `拒绝`, `reject`,
`n`, `no` reject (after Unicode NFKC, so full-width `１` and `ＹＥＳ` count; trimmed; any case);
`2 <reason>` rejects with the reason. Anything else is not a decision.

`Recent` is what this process sent to whom on one text channel, and the answers it gave: it
lets an answer say which request a reply decided and how many more wait for that person, lets a
reply to an expired request be told so after the sweeper has closed it, and refuses a reply
delivered again (same `webhook-id`) with the first answer. It is memory of this process only,
kept for the callbacks' 5-minute freshness window (replies) and the last `PER_PERSON` requests
per person (notices); after a restart, or on another server, the answers are the shared route's
plainer ones and a replay is refused only by the freshness window.
"""

from __future__ import annotations

import threading
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from .._util import utcnow
from .contract import InboundOutcome
from .texts import REPLIES, TEXT_DECIDED, TEXT_EXPIRED, TEXT_MORE_WAITING, TEXT_NOTHING_WAITING, Locale

APPROVE_WORDS = frozenset({"1", "批准", "approve", "y", "yes"})
REJECT_WORDS = frozenset({"2", "拒绝", "reject", "n", "no"})
PER_PERSON = 50
PEOPLE = 10_000
FINAL_WORDS = frozenset(words[kind] for words in REPLIES.values() for kind in ("approve", "reject"))
"""The shared route's words for a decision that closed the request (a quorum's counted approval
says something else, and is passed on as it is)."""
REPLAY_WINDOW = timedelta(minutes=11)
IN_HAND = timedelta(seconds=30)
BEING_HANDLED = {"ok": False, "reply": "…"}
"""The answer to a reply delivered again while the first delivery is still being handled."""
"""A signed reply verifies for 5 minutes either side of its timestamp; kept a little longer."""


def parse_reply(text: str) -> dict[str, Any] | None:
    """The decision a reply makes (`{"type": "approve"}`, `{"type": "reject", "message": ...}`),
    or None when it is not one of the reply words."""
    normal = unicodedata.normalize("NFKC", text).strip()
    words = normal.casefold()
    if words in APPROVE_WORDS:
        return {"type": "approve"}
    if words in REJECT_WORDS:
        return {"type": "reject"}
    first, _, rest = words.partition(" ")
    if first in REJECT_WORDS and rest.strip():
        return {"type": "reject", "message": normal.partition(" ")[2].strip()}
    return None


@dataclass
class Sent:
    request_id: str
    action: str
    deadline: datetime
    ended: str | None = None
    """How it ended (approved, expired…), once its update went out."""

    def waiting(self, now: datetime) -> bool:
        return self.ended is None and self.deadline > now


class Recent:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sent: OrderedDict[str, OrderedDict[str, Sent]] = OrderedDict()
        self._answers: OrderedDict[str, tuple[datetime, Any]] = OrderedDict()

    # -- what was sent ---------------------------------------------------------------------

    def sent(self, target: str, request_id: str, action: str, deadline: datetime) -> None:
        with self._lock:
            person = self._sent.setdefault(target, OrderedDict())
            self._sent.move_to_end(target)
            person[request_id] = Sent(request_id, action, deadline)
            person.move_to_end(request_id)
            while len(person) > PER_PERSON:
                person.popitem(last=False)
            while len(self._sent) > PEOPLE:
                self._sent.popitem(last=False)

    def ended(self, target: str, request_id: str, status: str) -> None:
        with self._lock:
            person = self._sent.get(target)
            found = person.get(request_id) if person is not None else None
            if found is not None:
                found.ended = status

    def _of(self, target: str) -> list[Sent]:
        with self._lock:
            return list(self._sent.get(target, {}).values())

    # -- replays ---------------------------------------------------------------------------

    def claim(self, delivery_id: str | None) -> tuple[bool, Any]:
        """(True, None) for a reply seen the first time (it is now being handled); (False, the
        first answer) for one delivered again. A reply whose handling never answered (the
        server failed) may be tried again after `IN_HAND`."""
        if not delivery_id:
            return True, None
        now = utcnow()
        with self._lock:
            self._forget_old()
            kept = self._answers.get(delivery_id)
            if kept is not None and (kept[1] is not None or kept[0] > now - IN_HAND):
                return False, kept[1] if kept[1] is not None else BEING_HANDLED
            self._answers[delivery_id] = (now, None)
            return True, None

    def keep_answer(self, delivery_id: str | None, answer: Any) -> None:
        if not delivery_id:
            return
        with self._lock:
            self._answers[delivery_id] = (utcnow(), answer)
            self._answers.move_to_end(delivery_id)
            self._forget_old()

    def _forget_old(self) -> None:
        cutoff = utcnow() - REPLAY_WINDOW
        while self._answers:
            first = next(iter(self._answers.values()))
            if first[0] >= cutoff:
                break
            self._answers.popitem(last=False)

    # -- the words -------------------------------------------------------------------------

    def reply_to(
        self, sender: str, decision: dict[str, Any] | None, outcome: InboundOutcome, locale: Locale
    ) -> str:
        """What the person is told: which request their reply decided and how many more wait,
        or that it expired, in the channel's language where the words are the channel's."""
        now = utcnow()
        mine = self._of(sender)
        if outcome.result == "expired":
            return TEXT_EXPIRED
        if outcome.result == "unknown_request":
            latest = mine[-1] if mine else None
            if latest is not None and (latest.ended == "expired" or latest.deadline <= now):
                return TEXT_EXPIRED
            return TEXT_NOTHING_WAITING[locale]
        if outcome.result != "decided" or decision is None:
            return outcome.message
        kind = str(decision.get("type"))
        decided = next((sent for sent in mine if sent.request_id == outcome.request_id), None)
        words = outcome.message
        if decided is not None and kind in TEXT_DECIDED[locale] and outcome.message in FINAL_WORDS:
            words = TEXT_DECIDED[locale][kind].format(action=decided.action)
            decided.ended = decided.ended or kind
        others = [sent for sent in mine if sent.request_id != outcome.request_id and sent.waiting(now)]
        if others:
            words += "\n" + TEXT_MORE_WAITING[locale].format(count=len(others))
        return words
