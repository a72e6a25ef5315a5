"""Previews: long values cut to a bounded size wherever many requests are shown at once.

A request's args may be as large as the body limit allows, and a list of fifty, an event sent
to every open stream or a page of cards would carry every byte of them. Lists
(`GET /v1/requests`), the event stream (`GET /v1/events`) and the inbox's cards show each long
value cut instead: a string keeps its start and says how much was left out, an array or object
keeps its first items and says how many more there were, nesting stops at PREVIEW_DEPTH. A view
that was cut says so (`"truncated": true`) and names the one that is not
(`"full_view": "/v1/requests/{id}"`; in the inbox, the request page). The asking agent's own
`record` is never cut: a remote gate replays from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

PREVIEW_CHARS = 2000
"""About how many characters of JSON one previewed value may take."""
STRING_CHARS = 500
"""The longest string kept whole in a preview."""
PREVIEW_DEPTH = 8
"""How deeply a preview shows nested arrays and objects."""
MORE = "…"
"""The key, in a cut object, that says how many keys were left out."""


@dataclass(frozen=True, slots=True)
class Preview:
    value: Any
    cut: bool
    """Whether anything was left out."""


def preview(value: Any, budget: int = PREVIEW_CHARS) -> Preview:
    """`value` cut to about `budget` characters of JSON (the same object when nothing was cut)."""
    cutter = _Cutter(budget)
    shown = cutter.cut(value, 0)
    return Preview(shown, cutter.cut_anything)


def preview_text(text: str, limit: int = PREVIEW_CHARS) -> Preview:
    """A long text (a description, a message) cut to `limit` characters."""
    if len(text) <= limit:
        return Preview(text, False)
    return Preview(_cut_string(text, limit), True)


class _Cutter:
    def __init__(self, budget: int) -> None:
        self.left = budget
        self.cut_anything = False

    def cut(self, value: Any, depth: int) -> Any:
        if isinstance(value, str):
            return self._string(value)
        if isinstance(value, dict):
            return self._object(value, depth)
        if isinstance(value, list | tuple):
            return self._array(value, depth)
        self.left -= 8  # a number, true, false or null
        return value

    def _string(self, text: str) -> str:
        limit = max(min(STRING_CHARS, self.left), 40)
        if len(text) <= limit:
            self.left -= len(text) + 2
            return text
        self.cut_anything = True
        self.left -= limit + 2
        return _cut_string(text, limit)

    def _object(self, value: dict[Any, Any], depth: int) -> Any:
        if depth >= PREVIEW_DEPTH and value:
            self.cut_anything = True
            return f"{MORE} (an object of {_count(len(value), 'key')})"
        shown: dict[Any, Any] = {}
        same = True
        for index, (key, item) in enumerate(value.items()):
            if self.left <= 0:
                self.cut_anything = True
                shown[MORE] = f"{_count(len(value) - index, 'more key')}"
                return shown
            self.left -= len(str(key)) + 4
            kept = self.cut(item, depth + 1)
            same = same and kept is item
            shown[key] = kept
        return value if same else shown

    def _array(self, value: list[Any] | tuple[Any, ...], depth: int) -> Any:
        if depth >= PREVIEW_DEPTH and value:
            self.cut_anything = True
            return f"{MORE} (an array of {_count(len(value), 'item')})"
        shown: list[Any] = []
        same = True
        for index, item in enumerate(value):
            if self.left <= 0:
                self.cut_anything = True
                shown.append(f"{MORE} {_count(len(value) - index, 'more item')}")
                return shown
            self.left -= 2
            kept = self.cut(item, depth + 1)
            same = same and kept is item
            shown.append(kept)
        return value if same else shown


def _cut_string(text: str, limit: int) -> str:
    return f"{text[:limit]}{MORE} ({_count(len(text) - limit, 'more character')})"


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}" + ("" if number == 1 else "s")


PREVIEWED = ("description", "args", "final_args", "decision", "resolution")
"""The fields of a request's view that may be long."""


def brief_view(view: dict[str, Any]) -> dict[str, Any]:
    """A request's view (`Request.to_dict()`) with its long fields cut, marked, and pointing to
    the full one."""
    cut = False
    for name in PREVIEWED:
        value = view.get(name)
        if value is None:
            continue
        shown = preview_text(value) if isinstance(value, str) else preview(value)
        view[name] = shown.value
        cut = cut or shown.cut
    view["truncated"] = cut
    if cut:
        view["full_view"] = f"/v1/requests/{view['id']}"
    return view
