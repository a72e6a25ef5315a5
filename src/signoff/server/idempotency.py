"""`Idempotency-Key`: a call that changes a request, made again with the same key, gets the
first call's answer instead of changing anything twice.

A client whose answer was lost (the connection dropped, the server restarted) cannot know
whether its call happened; made again as it is, a decision would get 409 AlreadyDecided and a
claim would find its own execution running. With `Idempotency-Key: <a fresh key per logical
call>` (1 to 255 visible ASCII characters), the server keeps the answer for
`ServerSettings.idempotency_ttl` (a day):

- the same user, key, method, path and body: the first status and body again, with
  `Idempotent-Replayed: true`;
- the same key with another body, or on another endpoint: 422 `IdempotencyKeyReused`;
- errors are not kept: a call that failed changed nothing, so made again it is simply tried
  again, and answered as things are then.

The answer is kept in the same transaction as the change wherever the store can: on SQLite the
endpoint's store calls, the rendering of its answer and the kept answer run on the grouped
writer and share one commit, so a crash loses both or neither. On PostgreSQL each write commits
on its own and the answer is kept just after the change; a crash in between makes the retry run
again (a decision then answers 409, naming the first decider).

The endpoints that honour it: POST /v1/requests, POST /v1/requests/{id}/decision,
POST /v1/requests/{id}/cancel, PATCH /v1/requests/{id}, POST /v1/requests/{id}/execution and
POST /v1/threads/{id}/cancel (each documents the header in /openapi.json).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from fastapi import Request as HttpRequest
from starlette.responses import Response

from .._util import utcnow
from ..errors import IdempotencyKeyReused, InvalidInput
from ..store import Store
from ..store.idempotency_ops import KeptAnswer
from .access import Caller
from .answers import SafeJSONResponse
from .context import server_of

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
MAX_KEY = 255

DOCUMENTED: dict[str, Any] = {
    "parameters": [
        {
            "name": HEADER,
            "in": "header",
            "required": False,
            "schema": {"type": "string", "minLength": 1, "maxLength": MAX_KEY, "pattern": "^[!-~]+$"},
            "description": (
                "A fresh key per logical call, the same on each retry of it. Made again by the same "
                "user with the same body, the call gets the first answer again (status and body, "
                f"with `{REPLAYED}: true`) instead of changing anything twice; the same key with "
                "another body gets 422. Answers are kept a day; errors are not kept."
            ),
        }
    ]
}
"""`openapi_extra` for the endpoints that honour the header."""


@dataclass(frozen=True, slots=True)
class Answer:
    """What an endpoint answers: its JSON content and status."""

    content: Any
    status: int = 200


@dataclass(frozen=True, slots=True)
class _Call:
    user: str
    key: str
    method: str
    path: str
    fingerprint: str

    def same_as(self, kept: KeptAnswer) -> bool:
        return (kept.method, kept.path, kept.fingerprint) == (self.method, self.path, self.fingerprint)


async def answer_once(http: HttpRequest, caller: Caller, work: Callable[[], Answer]) -> Response:
    """Run `work` (the endpoint's store calls, returning its answer) as one write, and answer:
    once per Idempotency-Key when the call has one."""
    server = server_of(http)
    key = http.headers.get(HEADER)
    if key is None:
        answer = await server.write(work)
        return SafeJSONResponse(answer.content, answer.status)
    if not 1 <= len(key) <= MAX_KEY or not all("!" <= char <= "~" for char in key):
        raise InvalidInput(f"{HEADER} must be 1 to {MAX_KEY} visible ASCII characters (e.g. a UUID)")
    call = _Call(
        user=caller.user.name,
        key=key,
        method=http.method,
        path=http.url.path,
        fingerprint=hashlib.sha256(await http.body()).hexdigest(),
    )
    kept, replayed = await server.write(_once, server.store, call, work, server.settings.idempotency_ttl)
    return Response(
        kept.body.encode(),
        kept.status,
        media_type="application/json",
        headers={REPLAYED: "true"} if replayed else None,
    )


async def answer_once_as(http: HttpRequest, user: str, key: str, work: Callable[[], Answer]) -> Response:
    """`answer_once` for a caller known otherwise than by a token (a signed webhook: `user` is
    its namespace, `key` its message id)."""
    server = server_of(http)
    if not 1 <= len(key) <= MAX_KEY or not all("!" <= char <= "~" for char in key):
        raise InvalidInput(f"the message id must be 1 to {MAX_KEY} visible ASCII characters")
    call = _Call(
        user=user,
        key=key,
        method=http.method,
        path=http.url.path,
        fingerprint=hashlib.sha256(await http.body()).hexdigest(),
    )
    kept, replayed = await server.write(_once, server.store, call, work, server.settings.idempotency_ttl)
    return Response(
        kept.body.encode(),
        kept.status,
        media_type="application/json",
        headers={REPLAYED: "true"} if replayed else None,
    )


def _once(store: Store, call: _Call, work: Callable[[], Answer], ttl: timedelta) -> tuple[KeptAnswer, bool]:
    """The kept answer and True, or `work`'s answer, kept, and False. Runs where the store's
    writes run, so that the answer is kept with the change (in one commit on SQLite)."""
    kept = store.kept_answer(call.user, call.key, ttl=ttl)
    if kept is not None:
        return _matching(kept, call), True
    try:
        answer = work()
    except Exception:
        # With writes that commit one by one (PostgreSQL), the same call made concurrently may
        # have changed the request and kept its answer since the look above.
        kept = store.kept_answer(call.user, call.key, ttl=ttl)
        if kept is not None and call.same_as(kept):
            return kept, True
        raise
    rendered = SafeJSONResponse(answer.content, answer.status)
    fresh = KeptAnswer(
        method=call.method,
        path=call.path,
        fingerprint=call.fingerprint,
        status=answer.status,
        body=bytes(rendered.body).decode(),
        created_at=utcnow(),
    )
    if store.keep_answer(call.user, call.key, fresh, ttl=ttl):
        return fresh, False
    kept = store.kept_answer(call.user, call.key, ttl=ttl)  # a concurrent call answered first
    assert kept is not None
    return _matching(kept, call), True


def _matching(kept: KeptAnswer, call: _Call) -> KeptAnswer:
    if call.same_as(kept):
        return kept
    if (kept.method, kept.path) == (call.method, call.path):
        other = "the same call with a different body"
    else:
        other = f"another call ({kept.method} {kept.path})"
    raise IdempotencyKeyReused(
        f"{HEADER} {call.key!r} was already used for {other}; use a fresh key for each new call"
    )
