"""JSON that signoff can store and send back: finite numbers, nesting at most MAX_DEPTH deep, and
text that UTF-8 can encode.

Python's `json` reads `NaN`, `Infinity` and `1e400` (as infinity) and writes them back as `NaN`
and `Infinity`, which are not JSON: a browser, PostgreSQL's json type and Starlette's
JSONResponse refuse them, so a request stored with them could be read but never answered. A lone
surrogate (`"\\ud800"`) cannot be written to either database, and nesting thousands deep makes
any recursive reader fail. These values are refused with a clear error before anything is
stored: at the server's door (`server/limits.py`), in `NewRequest`, and in the store's own JSON
encoding, which every JSON column goes through.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ._util import compact_encoder
from .errors import InvalidInput

MAX_DEPTH = 100
"""How deeply arrays and objects may nest."""

_ENCODE = compact_encoder(sort_keys=False, allow_nan=False)
_SURROGATE = re.compile("[\ud800-\udfff]")


def find_problem(value: Any, where: str = "") -> str | None:
    """What makes `value` unstorable, said with its place (`args.rows[3]: NaN is not …`), or None."""
    stack: list[tuple[Any, str, int]] = [(value, where, 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return f"{_place(path)}: {_not_finite(item)}"
        elif isinstance(item, str):
            if not item.isascii() and _SURROGATE.search(item):
                return f"{_place(path)}: {_surrogate(item)}"
        elif isinstance(item, dict | list | tuple):
            if depth >= MAX_DEPTH:
                return f"{_place(path)}: nested more than {MAX_DEPTH} levels deep"
            if isinstance(item, dict):
                for key, child in reversed(item.items()):
                    if isinstance(key, str) and not key.isascii() and _SURROGATE.search(key):
                        return f"{_place(path)}: a key holds {_surrogate(key)}"
                    stack.append((child, f"{path}.{key}" if path else str(key), depth + 1))
            else:
                for index in range(len(item) - 1, -1, -1):
                    stack.append((item[index], f"{path}[{index}]", depth + 1))
    return None


def check(value: Any, what: str) -> None:
    """Raise InvalidInput when `value` cannot be stored as JSON; `what` names it (`args`)."""
    problem = find_problem(value, what)
    if problem is not None:
        raise InvalidInput(problem)


def checked_text(value: Any, what: str) -> str | None:
    """`check(value, what)` by encoding: `value` as `storable_text` writes it, or InvalidInput with
    `check`'s words. None when `check` accepts a value the encoder cannot write (a key JSON has no
    form for): storing it fails later, as it did."""
    try:
        text = _ENCODE(value)
    except (ValueError, RecursionError, TypeError):
        check(value, what)
        return None
    if _doubtful(text):
        check(value, what)
    return text


def storable_text(value: Any) -> str:
    """`value` as the store writes it: compact JSON, key order kept, non-JSON leaves as their `str`.
    InvalidInput when it holds NaN or infinities, a lone surrogate, or nests too deeply."""
    try:
        text = _ENCODE(value)
    except (ValueError, RecursionError):  # NaN or infinity; a cycle or nesting too deep for json
        raise InvalidInput(
            "cannot store " + (find_problem(value) or "a value that refers to itself")
        ) from None
    if _doubtful(text):
        problem = find_problem(value)
        if problem is not None:
            raise InvalidInput("cannot store " + problem)
    return text


def _doubtful(text: str) -> bool:
    """Whether encoded `text` may nest too deeply or hold a lone surrogate (the encoder refuses
    only NaN and infinities): then the value itself is checked."""
    return (text.count("[") + text.count("{") > MAX_DEPTH) or (
        not text.isascii() and bool(_SURROGATE.search(text))
    )


def _not_finite(number: float) -> str:
    if math.isnan(number):
        return "NaN is not a number JSON can hold; send it as a string or null"
    sign = "" if number > 0 else "-"
    return (
        f"the number is infinite ({sign}Infinity, or beyond ±1.8e308 such as {sign}1e400), "
        "which JSON cannot hold; send it as a string or null"
    )


def _surrogate(text: str) -> str:
    match = _SURROGATE.search(text)
    code = f"\\u{ord(match.group()):04x}" if match else "?"
    return f"a lone surrogate ({code}) is not text UTF-8 can encode"


def _place(path: str) -> str:
    if not path:
        return "the value"
    return path if len(path) <= 80 else f"{path[:40]}…{path[-30:]}"


def finite_copy(value: Any) -> Any:
    """`value` with what JSON cannot hold replaced: NaN and infinities by None (null, as pydantic
    writes them), lone surrogates by U+FFFD. For sending back values stored before signoff
    refused them."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return value if value.isascii() else value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {finite_copy(key): finite_copy(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finite_copy(item) for item in value]
    return value
