"""Text for people at a terminal: what is there is what they read (hidden characters escaped and
warned about), Rich markup never taken from data, and one way of writing times."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from rich.markup import escape

from .._util import as_text, format_moment, from_iso
from ..visible import hidden_characters, visible

TIME_KEYS = frozenset(
    {"at", "created_at", "updated_at", "decided_at", "deadline", "started_at", "finished_at", "lease_until"}
)
"""Keys of audit data and execution records that hold a moment (shown like every other time)."""


def moment(value: datetime | str | None) -> str:
    """A moment (or a stored ISO text) the way the CLI and the inbox write times."""
    if value is None:
        return "-"
    if isinstance(value, datetime):
        return format_moment(value)
    try:
        return format_moment(from_iso(value))
    except ValueError:
        return value


def with_times(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with its top-level moments (see `TIME_KEYS`) written as times; never args."""
    return {key: moment(value) if key in TIME_KEYS and value else value for key, value in data.items()}


def json_text(data: Any) -> str:
    """JSON for `--json` and exports: the same values, but a hidden character is written as its
    `\\uXXXX` escape (equal JSON, and the terminal shows what is there)."""
    text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    return text if text.isascii() else "".join(_json_char(char) for char in text)


def _json_char(char: str) -> str:
    return char if char.isascii() or visible(char) == char else json.dumps(char)[1:-1]


class Readout:
    """Prepares data for the terminal and remembers where it found characters a person cannot see,
    for one warning under what was printed."""

    def __init__(self) -> None:
        self.found: dict[str, list[str]] = {}

    def text(self, value: str, where: str, *, newlines: bool = False) -> str:
        """`value` with hidden characters escaped (line breaks kept with `newlines=True`), as Rich markup."""
        self._look(value.replace("\n", "") if newlines else value, where)
        return escape(visible(value, newlines=newlines))

    def value(self, value: Any, where: str) -> str:
        """An argument or any JSON value: strings as they are, the rest as JSON; hidden characters
        in any string inside it (keys too) escaped and noted."""
        for part in _strings(value):
            self._look(part, where)
        return escape(visible(as_text(value)))

    def _look(self, value: str, where: str) -> None:
        for found in hidden_characters(value):
            places = self.found.setdefault(found, [])
            if where not in places:
                places.append(where)

    def warning(self) -> str | None:
        """One line saying which hidden characters were escaped, and where; None when there were none."""
        if not self.found:
            return None
        parts = [f"{found} (in {', '.join(places)})" for found, places in self.found.items()]
        return "[bold red]Warning:[/bold red] characters a person cannot see, shown escaped: " + escape(
            "; ".join(parts)
        )


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)
