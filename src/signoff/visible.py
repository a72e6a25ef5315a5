"""Characters a person cannot see: refused in names, shown escaped wherever a person reads args.

A bidi override (U+202E) makes `/home/user/\u202etxt.hsab_ekam` read as `…make_bash.txt`; a
newline in a tool name prints a fake second line ("safe_tool\\nApproved by admin"); zero-width
characters make two different names look the same. Names (tool, agent, app) must not contain
them at all; in args they are legitimate data, so they are shown as escapes (`\\u202e`, `\\n`)
with a warning, never rendered as they are.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from .errors import InvalidInput

_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cs"})
"""Control, format (bidi controls, zero-width), line/paragraph separators, private use, surrogates."""
_ALSO_HIDDEN = frozenset({"\u115f", "\u1160", "\u3164", "\uffa0", "\u2800"})
"""Letters that render as blank space (Hangul fillers, the blank Braille pattern)."""


@lru_cache(maxsize=4096)
def _is_hidden(char: str) -> bool:
    return char in _ALSO_HIDDEN or unicodedata.category(char) in _HIDDEN_CATEGORIES


def hidden_characters(text: str) -> list[str]:
    """Each hidden character in `text`, once, as `U+202E RIGHT-TO-LEFT OVERRIDE`, in order of appearance."""
    if text.isascii() and text.isprintable():
        return []
    found: dict[str, None] = {}
    for char in text:
        if _is_hidden(char):
            found.setdefault(describe(char), None)
    return list(found)


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


def _escape(char: str) -> str:
    short = _SHORT_ESCAPES.get(char)
    if short is not None:
        return short
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
