"""Whether a signed callback is fresh: its timestamp (whole seconds since the epoch, as Slack,
Standard Webhooks, WeCom and Feishu all send it) within a window of now.

One parser for all of them, strict on purpose: `float()` reads `nan` (which compares false with
everything, so a `nan` callback never goes stale and can be replayed for ever), `inf`, `1e3`
and `12.5`; `int()` reads `+12`, ` 12`, `1_000` and other digits than ASCII ones. A signature
covers the timestamp's text, so a form the sender never makes is refused, not read.
"""

from __future__ import annotations

import re
import time

from .contract import BadSignature

WINDOW = 300.0
"""Seconds a signed callback's timestamp may be off from now (either way)."""
TIMESTAMP = re.compile(r"[0-9]{1,12}")
"""Whole seconds, ASCII digits only (twelve reach past the year 33000)."""


def parse_timestamp(value: str | None, *, what: str = "the callback's timestamp") -> int:
    """`value` as whole seconds since the epoch; `BadSignature` for anything else (missing,
    empty, signed, fractional, exponent, `nan`, `inf`, non-ASCII digits)."""
    if value is None or not TIMESTAMP.fullmatch(value):
        shown = "missing" if value is None else f"{value[:20]!r}"
        raise BadSignature(f"{what} is not a number of whole seconds since the epoch ({shown})")
    return int(value)


def check_fresh(
    timestamp: str | None,
    *,
    window: float = WINDOW,
    now: float | None = None,
    what: str = "the callback's timestamp",
) -> int:
    """The timestamp, once it reads (`parse_timestamp`) and is within `window` seconds of now;
    `BadSignature` otherwise."""
    sent = parse_timestamp(timestamp, what=what)
    off = (time.time() if now is None else now) - sent
    if abs(off) > window:
        how = "too old" if off > 0 else "too new"
        span = f"{window / 60:g} minutes" if window % 60 == 0 else f"{window:g} s"
        raise BadSignature(f"{what} is {how}: {int(abs(off))} s away from now (the window is {span})")
    return sent


__all__ = ["WINDOW", "check_fresh", "parse_timestamp"]
