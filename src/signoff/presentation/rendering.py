"""Printing what an agent sent so that a person sees every character of it."""

from __future__ import annotations

from typing import Any

import markupsafe

from ..visible import visible


def shown(value: Any) -> Any:
    """What a page prints for `{{ value }}`: text with the characters a person cannot see (a bidi
    override, a zero-width space, a NUL) written as escapes, line breaks kept. Every template
    prints through this, so nothing an agent sent is rendered as it is."""
    if isinstance(value, str) and not isinstance(value, markupsafe.Markup):
        return visible(value, newlines=True)
    return value
