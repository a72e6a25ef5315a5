"""Answers kept for the server's `Idempotency-Key` header: a call made again with the same key
(a client's retry after its answer was lost) gets the answer the first one got, for `ttl`.

The server keeps an answer in the same transaction as the change it answers wherever the store
can (SQLite's grouped writes), so that a crash cannot leave the change without its answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from .._util import utcnow
from .core import StoreCore


@dataclass(frozen=True, kw_only=True)
class KeptAnswer:
    """The first answer given to one user's call with one key."""

    method: str
    path: str
    fingerprint: str
    """What identifies the call's body (a hash): the same key with another body is refused."""
    status: int
    body: str
    created_at: datetime


class IdempotencyOps(StoreCore):
    def kept_answer(self, user: str, key: str, *, ttl: timedelta) -> KeptAnswer | None:
        """The answer kept for `user`'s `key`, if it is younger than `ttl`."""
        with self._read() as tx:
            row = tx.one("find_kept_answer", user_name=user, idempotency_key=key, since=utcnow() - ttl)
        return KeptAnswer(**row) if row is not None else None

    def keep_answer(self, user: str, key: str, answer: KeptAnswer, *, ttl: timedelta) -> bool:
        """Keep `answer` for `user`'s `key`; False if the key already has one younger than `ttl`
        (a concurrent call with the same key answered first)."""
        now = utcnow()
        with self._transaction() as (tx, _):
            kept = tx.run(
                "keep_answer",
                user_name=user,
                idempotency_key=key,
                method=answer.method,
                path=answer.path,
                fingerprint=answer.fingerprint,
                status=answer.status,
                body=answer.body,
                now=now,
                since=now - ttl,
            )
        return kept == 1

    def purge_kept_answers(self, *, ttl: timedelta) -> int:
        """Forget answers older than `ttl` (the sweeper's job); how many were dropped."""
        with self._transaction() as (tx, _):
            return tx.run("purge_kept_answers", since=utcnow() - ttl)
