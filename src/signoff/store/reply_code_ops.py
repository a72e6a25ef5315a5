"""Reply codes (DESIGN §9): the short code a text message gives its request, so that a reply
names the request it decides ("1 K7QD") instead of whichever came last.

A code is made when it is first needed (the request's first text message to that person, or a
reply that lists the person's open requests), and then kept: one per request, channel and
person. A person's codes on a channel never repeat (until their requests are purged), so a late
reply carrying a closed request's code finds that request, never a newer one. Codes are random,
not sequential, so a mistyped code is very unlikely to be another open request's.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from ..errors import StoreError
from .core import StoreCore, Tx

CODE_ALPHABET = "ABCDEFGHJKMNPQRSTVWXYZ3456789"
"""Letters and digits that cannot be taken for one another (no 0/O, 1/I/L, 2/Z, U/V)."""
CODE_LENGTH = 4
TRIES = 50
"""Fresh codes tried before giving up (each is taken with probability used / 29⁴)."""


@dataclass(frozen=True)
class OpenRequest:
    """One of a person's pending requests notified on a channel, with its reply code."""

    request_id: str
    code: str


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normal_code(text: str) -> str | None:
    """`text` as a code (any case), or None when it cannot be one."""
    code = text.strip().upper()
    if len(code) == CODE_LENGTH and all(char in CODE_ALPHABET for char in code):
        return code
    return None


class ReplyCodeOps(StoreCore):
    def reply_code(self, request_id: str, channel: str, recipient: str) -> str:
        """The request's code for `recipient` on `channel`, made now if it has none."""
        with self._transaction() as (tx, _):
            return self._reply_code(tx, request_id, channel, recipient)

    def open_requests(self, channel: str, recipient: str) -> list[OpenRequest]:
        """`recipient`'s pending requests notified on `channel`, oldest first, each with its code
        (made now for those that have none yet)."""
        with self._read() as tx:
            rows = tx.all("open_notified", channel=channel, recipient=recipient)
        if any(row["code"] is None for row in rows):
            with self._transaction() as (tx, _):
                codes = {
                    row["request_id"]: self._reply_code(tx, row["request_id"], channel, recipient)
                    for row in rows
                }
        else:
            codes = {row["request_id"]: row["code"] for row in rows}
        return [OpenRequest(request_id, code) for request_id, code in codes.items()]

    def request_of_reply_code(self, channel: str, recipient: str, code: str) -> str | None:
        """The request `code` was given to, for `recipient` on `channel`, whatever its status."""
        with self._read() as tx:
            row = tx.one("request_of_reply_code", channel=channel, recipient=recipient, code=code)
        return str(row["request_id"]) if row is not None else None

    @staticmethod
    def _reply_code(tx: Tx, request_id: str, channel: str, recipient: str) -> str:
        where = {"request_id": request_id, "channel": channel, "recipient": recipient}
        for _ in range(TRIES):
            found = tx.one("reply_code_of", **where)
            if found is not None:
                return str(found["code"])
            tx.run("insert_reply_code", code=new_code(), **where)
        raise StoreError(f"no free reply code was found for {recipient} on {channel}")
