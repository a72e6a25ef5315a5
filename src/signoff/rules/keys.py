"""Keys that name tools in rules: an exact name, a list of names, a glob, or `*`.

The most specific key that matches wins: exact > list > glob > `*`. Among globs, the one with
the most literal characters wins (`github.pr.*` over `github.*`), then the one written first.
A list key is a tuple in Python and, in YAML or JSON, a string holding a JSON array
(`'["send_email", "delete_record"]'`, the encoding Haystack uses for its tuple keys).
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

Key = str | tuple[str, ...]
V = TypeVar("V")

_GLOB_CHARS = frozenset("*?[")


def parse_key(key: Key) -> Key:
    """Decode a JSON-array string key into a tuple; leave other keys as they are."""
    if isinstance(key, tuple):
        return key
    stripped = key.strip()
    if stripped.startswith("["):
        try:
            names = json.loads(stripped)
        except json.JSONDecodeError:
            return key
        if isinstance(names, list) and all(isinstance(name, str) for name in names):
            return tuple(names)
    return key


def format_key(key: Key) -> str:
    return json.dumps(list(key)) if isinstance(key, tuple) else key


def is_glob(key: str) -> bool:
    return key != "*" and any(char in _GLOB_CHARS for char in key)


def literal_chars(key: str) -> int:
    """How specific a glob is: its characters that are not wildcards."""
    return sum(1 for char in key if char not in _GLOB_CHARS)


@dataclass(frozen=True)
class Match(Generic[V]):
    key: str
    """The key as written, for traces."""
    kind: str
    """exact, list, glob or wildcard."""
    value: V


class KeyIndex(Generic[V]):
    """Looks up the most specific entry for a tool name. Built once per mapping."""

    def __init__(self, entries: Mapping[str, V] | Mapping[Key, V] | Iterable[tuple[Key, V]]) -> None:
        items = entries.items() if isinstance(entries, Mapping) else entries
        self._exact: dict[str, Match[V]] = {}
        self._listed: dict[str, Match[V]] = {}
        self._globs: list[tuple[int, int, str, Match[V]]] = []
        self._wildcard: Match[V] | None = None
        for position, (raw_key, value) in enumerate(items):
            key = parse_key(raw_key)
            if isinstance(key, tuple):
                match = Match(format_key(key), "list", value)
                for name in key:
                    self._listed.setdefault(name, match)
            elif key == "*":
                self._wildcard = Match("*", "wildcard", value)
            elif is_glob(key):
                self._globs.append((-literal_chars(key), position, key, Match(key, "glob", value)))
            else:
                self._exact[key] = Match(key, "exact", value)
        self._globs.sort(key=lambda item: (item[0], item[1]))

    def match(self, name: str) -> Match[V] | None:
        found = self._exact.get(name) or self._listed.get(name)
        if found is not None:
            return found
        for _, _, pattern, match in self._globs:
            if fnmatch.fnmatchcase(name, pattern):
                return match
        return self._wildcard
