"""A request's args as the text of TOOL_CALL_ARGS deltas.

A client appends every delta to the call's arguments and reads them as JSON at TOOL_CALL_END,
so what was sent can never be taken back. A drafting request's args change as the agent
streams them (`{"body": "He"}`, then `{"body": "Hello"}`): only the text two versions in a row
agree on is sent (`{"body":"He`), the rest when the request is ready. Should a part already sent
change after all, the call's text cannot be mended; `finish` says so, and the interrupt's
metadata still carries the true args.
"""

from __future__ import annotations

import json
from typing import Any


def args_text(args: dict[str, Any]) -> str:
    return json.dumps(args, ensure_ascii=False, separators=(",", ":"), default=str)


class ArgsStream:
    """What one tool call has been sent of its args so far."""

    def __init__(self) -> None:
        self.sent = ""
        self._last: str | None = None

    def draft(self, args: dict[str, Any]) -> str:
        """The delta to send for this version of a draft's args ("" for none yet)."""
        text = args_text(args)
        stable = _before_last_member(args) if self._last is None else _common_start(self._last, text)
        self._last = text
        if len(stable) > len(self.sent) and stable.startswith(self.sent):
            delta = stable[len(self.sent) :]
            self.sent = stable
            return delta
        return ""

    def finish(self, args: dict[str, Any]) -> tuple[str, bool]:
        """The last delta, and whether the text sent in all now reads as exactly `args`."""
        text = args_text(args)
        if not text.startswith(self.sent):
            return "", False
        delta = text[len(self.sent) :]
        self.sent = text
        return delta, True


def _before_last_member(args: dict[str, Any]) -> str:
    """The text of every member but the last, which may still be growing."""
    if len(args) < 2:
        return "{"
    head = args_text(dict(list(args.items())[:-1]))
    return head[:-1] + ","


def _common_start(one: str, other: str) -> str:
    size = min(len(one), len(other))
    for index in range(size):
        if one[index] != other[index]:
            return one[:index]
    return one[:size]
