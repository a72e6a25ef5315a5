"""Which request a text reply decides (DESIGN §9). A text reply names no request by id: its
message gave the request a reply code ("1 K7QD"), and a reply carrying that code decides that
request. Without a code it decides the sender's request only when exactly one is open for them
on that channel; with more, nothing is decided and the answer lists them, code, tool and first
arguments, for the person to choose. A code none of the sender's requests on the channel has
decides nothing either; a closed request's code reaches that request, whose refusal says how it
ended. So a bare "1" never lands on a request the person did not mean.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..channels.contract import InboundResult
from ..channels.texts import REPLIES, Locale
from ..requests import Request
from ..store import Store
from ..visible import visible_json

KEY_ARGS = 2
"""Arguments a listed request shows (the text channel cuts each value short)."""


@dataclass(frozen=True)
class Pick:
    """The request a reply decides, or why none is (`refusal`, with its words)."""

    request_id: str | None
    refusal: InboundResult | None = None
    words: str = ""


def pick_request(store: Store, channel: str, user: str, code: str | None, locale: Locale) -> Pick:
    """The request `user`'s reply on `channel` decides, by its `code` or as the only one open.
    With none open and no code, the newest notified of any status, so the answer can say it
    was already decided or expired."""
    words = REPLIES[locale]
    open_requests = store.open_requests(channel, user)
    if code is not None:
        found = next((entry.request_id for entry in open_requests if entry.code == code), None)
        found = found or store.request_of_reply_code(channel, user, code)
        if found is None:
            return Pick(None, "unknown_code", words["unknown_code"].format(code=code))
        return Pick(found)
    if len(open_requests) > 1:
        example = open_requests[-1].code
        return Pick(None, "needs_code", words["needs_code"].format(count=len(open_requests), code=example))
    if open_requests:
        return Pick(open_requests[0].request_id)
    return Pick(store.latest_notified_pending(channel, user))


def open_choices(
    store: Store, channel: str, user: str, *, leave_out: str | None = None
) -> list[dict[str, Any]]:
    """`user`'s requests still open on `channel` (but `leave_out`), oldest first, as an answer
    lists them: `{"code", "tool", "args": [[name, value], ...]}`, the args redacted."""
    open_requests = [entry for entry in store.open_requests(channel, user) if entry.request_id != leave_out]
    requests = store.get_requests([entry.request_id for entry in open_requests])
    return [
        {"code": entry.code, "tool": request.tool_name, "args": key_args(request)}
        for entry in open_requests
        if (request := requests.get(entry.request_id)) is not None
    ]


def key_args(request: Request) -> list[list[str]]:
    """The request's first `KEY_ARGS` arguments (redacted), each value as text (JSON if not a string)."""
    shown = list(request.shown_args().items())[:KEY_ARGS]
    return [[name, value if isinstance(value, str) else visible_json(value)] for name, value in shown]
