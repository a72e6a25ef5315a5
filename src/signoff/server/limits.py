"""What is let in at the server's door: bodies of at most `max_body` bytes, and only JSON that
signoff can store.

One pure ASGI middleware, in front of every route (the API, including the two hot endpoints
that read their own body, the inbox's forms, the handle links):

- a body over the limit gets 413 `PayloadTooLarge`: at once when its Content-Length says so,
  else as soon as the bytes read pass the limit; the rest is never read, nothing is stored;
- a body that is not a form is JSON, and it is checked before any route sees it: malformed
  JSON, `NaN`, `Infinity`, numbers beyond a double (`1e400`), lone surrogates and nesting more
  than MAX_DEPTH deep get 422 `InvalidInput` (see `signoff.jsonvalues`).

Starlette's own RequestBodyLimitMiddleware answers in plain text, and replaces any answer when
the Content-Length is over; signoff's errors are JSON, like every other error.
"""

from __future__ import annotations

import re
from typing import Any

import pydantic_core
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import InvalidInput, PayloadTooLarge, SignoffError
from ..jsonvalues import MAX_DEPTH
from ..jsonvalues import check as check_json
from .errors import error_body

MAX_BODY = 1024 * 1024
"""The default body limit: 1 MiB."""
MAX_INTEGER = 2**63 - 1
"""The largest integer a query parameter may be: what both databases' integers hold."""
FORM_TYPES = (b"application/x-www-form-urlencoded", b"multipart/form-data")
_SUSPECT = re.compile(rb"NaN|Infinity|[eE][+-]?\d{3}|\d{309}")
"""What any number JSON cannot hold must contain: the only bodies worth walking for one."""
_SIZE = re.compile(r"^\s*(\d+)\s*(b|k|kb|kib|m|mb|mib|g|gb|gib)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {None: 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def read_json(raw: bytes | str, what: str, *, malformed: str | None = None) -> Any:
    """`raw` parsed, if it is JSON signoff accepts; else InvalidInput saying what is wrong, where
    (`body.args.x: NaN is not …`), and, for a syntax error, `malformed: <where it broke>`
    (`malformed` defaults to "<what> is not valid JSON")."""
    try:
        value = pydantic_core.from_json(raw)
    except ValueError as exc:
        message = str(exc)
        if message.startswith("recursion limit exceeded"):
            raise InvalidInput(f"{what} is nested more than {MAX_DEPTH} levels deep") from None
        raise InvalidInput(f"{malformed or what + ' is not valid JSON'}: {message}") from None
    data = raw.encode() if isinstance(raw, str) else raw
    if data.count(b"[") + data.count(b"{") > MAX_DEPTH or _SUSPECT.search(data):
        check_json(value, what)
    return value


def parse_size(text: str) -> int:
    """`1048576`, `512KiB`, `1MiB`, `2M` (K, M and G count 1024s) as bytes; ValueError if not a size."""
    match = _SIZE.match(text)
    if match is None:
        raise ValueError(f"not a size: {text!r} (use e.g. 1MiB, 512KiB or a number of bytes)")
    unit = match.group(2)
    return int(match.group(1)) * _SIZE_UNITS[unit[0].lower() if unit else None]


def format_size(size: int) -> str:
    for unit, factor in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size:,} bytes"


RAW_BODY_PATHS = ("/channels/",)
"""Where bodies are the platforms' own (WeCom's XML, Slack's form, Feishu's encrypted JSON),
checked by the channel that verifies them: only their size is limited here."""


class Door:
    """The body limit and the JSON check, for every HTTP request."""

    def __init__(self, app: ASGIApp, *, max_body: int = MAX_BODY) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length: int | None = None
        chunked = form = False
        for name, value in scope["headers"]:
            if name == b"content-length":
                length = int(value) if value.isdigit() else None
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
            elif name == b"content-type":
                form = value.lower().startswith(FORM_TYPES)
        if length == 0 or (length is None and not chunked):  # no body
            await self.app(scope, receive, send)
        elif length is not None and length > self.max_body:
            await self._refuse(scope, send, self._too_large())
        elif form or scope["path"].startswith(RAW_BODY_PATHS):
            await self._counted(scope, receive, send)
        else:
            await self._checked_json(scope, receive, send)

    def _too_large(self) -> PayloadTooLarge:
        return PayloadTooLarge(
            f"the request body is larger than the limit of {format_size(self.max_body)}; nothing was "
            "stored (the server's operator sets the limit: signoff serve --max-body)"
        )

    async def _refuse(self, scope: Scope, send: Send, error: SignoffError) -> None:
        response = JSONResponse(error_body(type(error).__name__, error.message), error.status_code)
        await response(scope, _no_body, send)

    async def _checked_json(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Read the whole body (at most the limit), check it, then hand it on."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunk: bytes = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                await self._refuse(scope, send, self._too_large())
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        raw = b"".join(chunks)
        try:
            read_json(raw, "body", malformed="malformed JSON body")
        except InvalidInput as error:
            await self._refuse(scope, send, error)
            return
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if delivered:
                return await receive()
            delivered = True
            return {"type": "http.request", "body": raw, "more_body": False}

        await self.app(scope, replay, send)

    async def _counted(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A form, streamed to its parser and counted on the way: past the limit, reading stops
        and whatever the route would have answered is replaced by the 413."""
        received = 0
        over = started = False

        async def counted_receive() -> Message:
            nonlocal received, over
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body:
                    over = True
                    raise self._too_large()
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if over:
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except Exception:
            if not over:
                raise
        if over and not started:
            await self._refuse(scope, send, self._too_large())


async def _no_body() -> Message:
    return {"type": "http.disconnect"}
