"""Small helpers shared across modules: ids, time, canonical JSON, durations, how times read."""

from __future__ import annotations

import getpass
import json
import math
import os
import re
import reprlib
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


_last_id = [0, 0]
_id_lock = threading.Lock()
_PAIRS = [a + b for a in _CROCKFORD for b in _CROCKFORD]


def new_id(prefix: str) -> str:
    """A sortable unique id: `prefix_` + 26 Crockford base32 chars (48-bit ms time + 80 random bits).

    Ids made by one process in the same millisecond still sort in creation order.
    """
    millis = int(time.time() * 1000)
    with _id_lock:
        if millis <= _last_id[0]:
            millis, randomness = _last_id[0], _last_id[1] + 1
        else:
            randomness = int.from_bytes(os.urandom(10), "big") >> 1
        _last_id[0], _last_id[1] = millis, randomness
    value = (millis << 80) | (randomness & ((1 << 80) - 1))
    p = _PAIRS
    # 13 pairs of base32 digits from two halves of 70 and 60 bits, spelled out: shifting the
    # halves is cheaper than shifting all 130 bits, and one f-string than joining comprehensions
    high, low = value >> 60, value & ((1 << 60) - 1)
    return (
        f"{prefix}_{p[(high >> 60) & 1023]}{p[(high >> 50) & 1023]}{p[(high >> 40) & 1023]}"
        f"{p[(high >> 30) & 1023]}{p[(high >> 20) & 1023]}{p[(high >> 10) & 1023]}{p[high & 1023]}"
        f"{p[low >> 50]}{p[(low >> 40) & 1023]}{p[(low >> 30) & 1023]}{p[(low >> 20) & 1023]}"
        f"{p[(low >> 10) & 1023]}{p[low & 1023]}"
    )


def utcnow() -> datetime:
    return datetime.now(UTC)


def to_iso(moment: datetime) -> str:
    """Fixed-width UTC ISO 8601, so that text comparison orders moments."""
    if moment.tzinfo is not UTC:
        moment = moment.astimezone(UTC)
    # what isoformat(timespec="microseconds") writes, in half its time (four to seven a request)
    return _ISO % (
        moment.year,
        moment.month,
        moment.day,
        moment.hour,
        moment.minute,
        moment.second,
        moment.microsecond,
    )


_ISO = "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ"


def from_iso(text: str) -> datetime:
    moment = datetime.fromisoformat(text)  # reads a trailing Z as UTC since Python 3.11
    return moment if moment.tzinfo is UTC else moment.astimezone(UTC)


def format_moment(moment: datetime) -> str:
    """A moment as people read it, the same in the inbox, the CLI and error messages:
    `2025-06-01 14:03:07 UTC`."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def format_span(seconds: float) -> str:
    """A length of time as people read it: '45s', '12m', '3h 20m', '2d 4h' (the sign is ignored)."""
    seconds = int(abs(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes}m"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}h {minutes}m" if minutes else f"{hours}h"
    days, hours = divmod(hours, 24)
    return f"{days}d {hours}h" if hours else f"{days}d"


def compact_encoder(*, sort_keys: bool, allow_nan: bool) -> Callable[[Any], str]:
    """`json.JSONEncoder(...).encode` with no spaces, non-ASCII kept and `str` of what JSON cannot
    hold, made once: `encode` builds its C encoder anew on every call, which costs more than
    encoding a small value. It keeps no circular-reference check: a value that refers to itself
    fails with RecursionError, as one nested too deeply does, instead of ValueError."""
    encoder = json.JSONEncoder(
        sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False, allow_nan=allow_nan, default=str
    )
    make = getattr(json.encoder, "c_make_encoder", None)  # not in typeshed's stubs
    if make is None:  # an interpreter without the C accelerator
        return encoder.encode
    one_shot = make(None, str, json.encoder.encode_basestring, None, ":", ",", sort_keys, False, allow_nan)

    def encode(value: Any) -> str:
        return "".join(one_shot(value, 0))

    return encode


canonical_json = compact_encoder(sort_keys=True, allow_nan=True)
"""JSON with sorted keys and no spaces: the same value always gives the same text."""


def display_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def as_text(value: Any) -> str:
    """Strings as they are, anything else as JSON: how args and results are shown to people and models."""
    return value if isinstance(value, str) else display_json(value)


def cut(text: str, limit: int) -> str:
    """`text` at most `limit` characters long, ending in '…' when it was cut."""
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def os_user() -> str:
    """The operating system's user name: who acts when nobody says otherwise."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, None: 1}
MAX_DURATION = timedelta(days=365_000)
"""About a thousand years: the longest duration accepted, so that now plus it is still a moment
a datetime (up to the year 9999) and both databases can hold."""


def parse_duration(value: str | float | int | timedelta) -> timedelta:
    """`90`, `"90s"`, `"15m"`, `"24h"`, `"7d"` or a timedelta: positive and at most MAX_DURATION,
    else ValueError saying why."""
    shown = reprlib.repr(value)
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"not a duration: {shown} (use e.g. 90s, 15m, 24h, 7d)")
    elif isinstance(value, int | float):
        seconds = float(value)
    else:
        match = _DURATION.match(value)
        if match is None:
            raise ValueError(f"not a duration: {shown} (use e.g. 90s, 15m, 24h, 7d)")
        seconds = float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    if math.isnan(seconds):
        raise ValueError(f"not a duration: {shown} (use e.g. 90s, 15m, 24h, 7d)")
    if seconds > MAX_DURATION.total_seconds():
        raise ValueError(f"a duration can be at most {MAX_DURATION.days:,} days (1000 years), not {shown}")
    if seconds <= 0:
        raise ValueError(f"a duration must be positive, not {shown}")
    duration = value if isinstance(value, timedelta) else timedelta(seconds=seconds)
    if duration <= timedelta(0):  # a few microseconds, rounded away
        raise ValueError(f"a duration must be positive, not {shown}")
    return duration


def format_duration(delta: timedelta) -> str:
    seconds = delta.total_seconds()
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"
