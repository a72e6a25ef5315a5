"""What a text-fallback reply means, and the words it is answered with.

`parse_reply` reads a reply: `1`, `批准`, `approve`, `y`, `yes` approve; `2`, `拒绝`, `reject`,
`n`, `no` reject (after Unicode NFKC, so full-width `１` and `ＹＥＳ` count; trimmed; any case),
with the request's reply code before or after the word (`1 K7QD`, `K7QD 1`, `批准 k7qd`): any
four ASCII letters or digits there are taken as a code, so a mistyped code is an unknown code,
never a reason. `2 <reason>` and `2 K7QD <reason>` reject with the reason. Anything else is not
a decision. Which request a reply decides is the server's (`server.reply_picking`).

`Recent` is what this process sent to whom on one text channel, and the answers it gave: it
lets an answer say which request a reply decided, lets a reply to an expired request be told so
after the sweeper has closed it, and refuses a reply delivered again (same `webhook-id`) with
the first answer. It is memory of this process only, kept for the callbacks' 5-minute freshness
window (replies) and the last `PER_PERSON` requests per person (notices); after a restart, or on
another server, the answers are the shared route's plainer ones and a replay is refused only by
the freshness window. The requests still open for the person come with the outcome, from the store.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ..presentation import utcnow, visible
from .contract import InboundOutcome
from .texts import (
    REPLIES,
    TEXT_DECIDED,
    TEXT_EXPIRED,
    TEXT_NOTHING_WAITING,
    TEXT_OPEN,
    TEXT_STILL_OPEN,
    Locale,
)

APPROVE_WORDS = frozenset({"1", "批准", "approve", "y", "yes"})
REJECT_WORDS = frozenset({"2", "拒绝", "reject", "n", "no"})
PER_PERSON = 50
PEOPLE = 10_000
FINAL_WORDS = frozenset(words[kind] for words in REPLIES.values() for kind in ("approve", "reject"))
"""The shared route's words for a decision that closed the request (a quorum's counted approval
says something else, and is passed on as it is)."""
REPLAY_WINDOW = timedelta(minutes=11)
"""A signed reply verifies for 5 minutes either side of its timestamp; kept a little longer."""
IN_HAND = timedelta(seconds=30)
BEING_HANDLED = {"ok": False, "reply": "…"}
"""The answer to a reply delivered again while the first delivery is still being handled."""


CODE_LIKE = re.compile(r"[A-Za-z0-9]{4}", re.ASCII)
WORDS = re.compile(r"(\S+)(?:\s+(\S+))?(?:\s+(.*))?", re.DOTALL)
CHOICE_VALUE = 40
"""Characters of one argument's value a listed request shows."""


@dataclass(frozen=True)
class Reply:
    """What a reply says: the decision (`{"type": "approve"}`, `{"type": "reject", "message":
    ...}`) and the reply code it names (upper case), if any."""

    decision: dict[str, Any]
    code: str | None = None


def parse_reply(text: str) -> Reply | None:
    """The decision and code in a reply, or None when it is not one of the reply forms."""
    normal = unicodedata.normalize("NFKC", text).strip()
    words = WORDS.fullmatch(normal)
    if words is None:
        return None
    first, second, rest = words.group(1), words.group(2), words.group(3)
    kind, code = _kind(first), None
    if kind is None:  # "K7QD 1"
        if second is None or not CODE_LIKE.fullmatch(first):
            return None
        kind, code = _kind(second), first.upper()
    elif second is not None and CODE_LIKE.fullmatch(second):  # "1 K7QD"
        code = second.upper()
    else:  # "2 <reason>"
        rest = normal[len(first) :].strip() or None
    if kind is None:
        return None
    if not rest:
        return Reply({"type": kind}, code)
    if kind != "reject":
        return None
    return Reply({"type": "reject", "message": rest.strip()}, code)


def _kind(word: str) -> str | None:
    folded = word.casefold()
    if folded in APPROVE_WORDS:
        return "approve"
    if folded in REJECT_WORDS:
        return "reject"
    return None


def one_line(value: str, limit: int) -> str:
    """A value on one line (its whitespace runs made single spaces), its hidden characters (a
    bidi override, a zero-width space) written as escapes, cut to `limit` characters."""
    if "\n" in value:
        value = " ".join(value.split())
    value = visible(value)
    return value if len(value) <= limit else value[: limit - 1] + "…"


def choice_lines(choices: list[dict[str, Any]]) -> list[str]:
    """One line per open request an answer lists: `  K7QD  wire_money · to: acct-9, amount: 5000`."""
    lines = []
    for choice in choices:
        line = f"  {choice['code']}  {visible(str(choice['tool']))}"
        args = ", ".join(
            f"{visible(name)}: {one_line(value, CHOICE_VALUE)}" for name, value in choice["args"]
        )
        lines.append(f"{line} · {args}" if args else line)
    return lines


@dataclass
class Sent:
    request_id: str
    action: str
    deadline: datetime
    ended: str | None = None
    """How it ended (approved, expired…), once its update went out."""


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
        """What the person is told: which request their reply decided, or why none was, then
        their requests still open (code, tool, first arguments), in the channel's language where
        the words are the channel's."""
        words = self._said(sender, decision, outcome, locale)
        if not outcome.choices:
            return words
        lines = [words]
        if outcome.result == "decided":
            lines.append(TEXT_STILL_OPEN[locale].format(count=len(outcome.choices)))
        elif outcome.result != "needs_code":
            lines.append(TEXT_OPEN[locale])
        return "\n".join(lines + choice_lines(outcome.choices))

    def _said(
        self, sender: str, decision: dict[str, Any] | None, outcome: InboundOutcome, locale: Locale
    ) -> str:
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
        return words
