"""Characters a person cannot see: refused in names, shown escaped wherever a person reads args.

A bidi override (U+202E) makes `/home/user/\u202etxt.hsab_ekam` read as `…make_bash.txt`; a
newline in a tool name prints a fake second line ("safe_tool\\nApproved by admin"); zero-width
characters make two different names look the same. Names (tool, agent, app) must not contain
them at all; in args they are legitimate data, so they are shown as escapes (`\\u202e`, `\\n`)
with a warning, never rendered as they are.
"""

from __future__ import annotations

import json
import unicodedata
from functools import lru_cache
from typing import Any

from .errors import InvalidInput

_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cs"})
"""Control, format (bidi controls, zero-width), line/paragraph separators, private use, surrogates."""
_ALSO_HIDDEN = frozenset({"\u115f", "\u1160", "\u3164", "\uffa0", "\u2800"})
"""Letters that render as blank space (Hangul fillers, the blank Braille pattern)."""


@lru_cache(maxsize=4096)
def _is_hidden(char: str) -> bool:
    return char in _ALSO_HIDDEN or unicodedata.category(char) in _HIDDEN_CATEGORIES


def hidden_characters(text: str, *, newlines: bool = False) -> list[str]:
    """Each hidden character in `text`, once, as `U+202E RIGHT-TO-LEFT OVERRIDE`, in order of
    appearance. `newlines=True` leaves out line breaks (for text shown with its line breaks)."""
    if text.isascii() and text.isprintable():
        return []
    found: dict[str, None] = {}
    for char in text:
        if _is_hidden(char) and not (newlines and char == "\n"):
            found.setdefault(describe(char), None)
    return list(found)


def hidden_in(value: Any, *, newlines: bool = False) -> list[str]:
    """`hidden_characters` of every string in a JSON-like value (keys too), each character once."""
    found: dict[str, None] = {}
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.update(dict.fromkeys(hidden_characters(item, newlines=newlines)))
        elif isinstance(item, dict):
            stack.extend(reversed([part for pair in item.items() for part in pair]))
        elif isinstance(item, list | tuple):
            stack.extend(reversed(item))
    return list(found)


def visible_json(value: Any, *, indent: int | None = None) -> str:
    """`value` as JSON whose hidden characters are written as JSON escapes (`\\u202e`): it reads
    as what is there and parses back to the same value."""
    text = json.dumps(value, ensure_ascii=False, indent=indent, default=str)
    if text.isascii() and text.isprintable():
        return text
    # outside its strings JSON text has only indentation; inside them json.dumps escaped line breaks
    return "".join(_json_escape(char) if char != "\n" and _is_hidden(char) else char for char in text)


def describe(char: str) -> str:
    name = unicodedata.name(char, "") or _CONTROL_NAMES.get(char, "CONTROL CHARACTER")
    return f"U+{ord(char):04X} {name}"


def visible(text: str, *, newlines: bool = False) -> str:
    """`text` with every hidden character written as an escape (`\\n`, `\\t`, `\\u202e`), so that
    what a person reads is what is there. `newlines=True` keeps line breaks as they are (for a
    multi-line value shown in its own box)."""
    if text.isascii() and text.isprintable():
        return text
    out = []
    for char in text:
        if char == "\n" and newlines:
            out.append(char)
        elif _is_hidden(char):
            out.append(_escape(char))
        else:
            out.append(char)
    return "".join(out)


def check_name(value: str, what: str) -> str:
    """Refuse a tool, agent or app name a person could misread; return it unchanged."""
    problems = hidden_characters(value)
    if problems:
        raise InvalidInput(
            f"{what} {visible(value)!r} contains characters a person cannot see ({', '.join(problems)}); "
            "names may not contain control, format or invisible characters"
        )
    return value


_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\0": "\\0"}
_CONTROL_NAMES = {"\n": "LINE FEED", "\r": "CARRIAGE RETURN", "\t": "TAB", "\0": "NUL"}


def _json_escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def _escape(char: str) -> str:
    short = _SHORT_ESCAPES.get(char)
    if short is not None:
        return short
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
